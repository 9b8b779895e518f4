/**
 * The client row of `deno task bench:streams` (`--only client`): `--client-subscribers` (1,000)
 * Deno clients subscribe to one topic of fw's `eventServer()` (the server of
 * `_bench_eventserver_server.ts`, in its own process) and the bench measures, on the client side:
 *
 * - end-to-end latency p50/p99: 20 messages published through `POST /events/publish`, spaced so
 *   delivery stays below capacity, from the publish call to the subscriber's callback (one machine
 *   clock), over every (client, message) pair;
 * - receive rate: messages received per second, summed over clients, while the server publishes
 *   batches back to back for `--duration` seconds.
 *
 * `eventClient` (`@fw/events/client`: frame parsing, payload validation against the topic schema,
 * per-subscription bookkeeping) is compared with a raw `fw.events.v1` client (a bare WebSocket,
 * `JSON.parse`, no validation) in the same run, alternating order over `--rounds` (2).
 *
 * @module
 */

import { eventClient } from "@fw/events/client";
import { BenchQuote } from "./_bench_eventserver_topic.ts";
import { Child } from "./_bench_child.ts";

const dir = new URL(".", import.meta.url).pathname;
const now = () => performance.timeOrigin + performance.now();
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

type Quote = { seq: number; at: number; text: string };
type OnQuote = (q: Quote) => void;

/** Opens one subscriber of `kind`; returns its closer. */
function subscriber(kind: "eventClient" | "raw", url: string, on: OnQuote): () => void {
  if (kind === "eventClient") {
    const client = eventClient({ url, reconnect: false });
    client.subscribe(BenchQuote, (q) => on(q));
    return () => client.close();
  }
  const ws = new WebSocket(url);
  ws.onopen = () => ws.send(JSON.stringify({ type: "hello", protocol: "fw.events.v1" }));
  ws.onmessage = (e) => {
    const f = JSON.parse(e.data);
    if (f.type === "welcome") {
      ws.send(JSON.stringify({ type: "subscribe", sub: "q", topic: BenchQuote.name }));
    } else if (f.type === "event") on(f.payload);
  };
  return () => ws.close();
}

function percentile(sorted: number[], p: number): number {
  return sorted.length ? sorted[Math.min(sorted.length - 1, Math.floor(sorted.length * p))] : NaN;
}

interface Row {
  round: number;
  client: string;
  subscribers: number;
  p50Ms: number;
  p99Ms: number;
  latencySamples: number;
  receivedPerSecond: number;
}

async function measure(
  kind: "eventClient" | "raw",
  round: number,
  subscribers: number,
  duration: number,
): Promise<Row> {
  const server = new Child([`${dir}_bench_eventserver_server.ts`, "es"], {
    raiseFileLimit: false,
    name: "server",
  });
  const closers: (() => void)[] = [];
  try {
    const { port } = await server.read();
    const url = `ws://127.0.0.1:${port}/events/ws`;
    let latencies: number[] | undefined;
    let received = 0;
    let last = 0;
    const on: OnQuote = (q) => {
      received++;
      last = now();
      latencies?.push(last - q.at);
    };
    for (let i = 0; i < subscribers; i++) {
      closers.push(subscriber(kind, url, on));
      if (i % 100 === 99) await sleep(10);
    }
    const deadline = Date.now() + 60_000;
    while ((await server.ask("subs")).subs < subscribers) {
      if (Date.now() > deadline) throw new Error(`${kind}: subscribers did not all subscribe`);
      await sleep(50);
    }
    latencies = [];
    await server.ask(`tickhttp 20 ${Math.max(20, Math.ceil(subscribers / 10))}`);
    await sleep(500);
    const sorted = latencies.sort((a, b) => a - b);
    latencies = undefined;
    received = 0;
    const started = now();
    await server.ask("start 10");
    await sleep(duration * 1000);
    await server.ask("stop");
    let before = -1;
    while (before !== received) { // drain what is in flight
      before = received;
      await sleep(200);
    }
    return {
      round,
      client: kind,
      subscribers,
      p50Ms: Math.round(percentile(sorted, 0.5) * 100) / 100,
      p99Ms: Math.round(percentile(sorted, 0.99) * 100) / 100,
      latencySamples: sorted.length,
      receivedPerSecond: Math.round(received / ((last - started) / 1000)),
    };
  } finally {
    for (const close of closers) close();
    await sleep(200);
    await server.close();
  }
}

/**
 * Runs the client row and prints its table with per-round ratios (eventClient / raw).
 *
 * @param o Subscribers, fan-out duration in seconds and rounds.
 */
export async function benchClient(
  o: { subscribers: number; duration: number; rounds: number },
): Promise<void> {
  const rows: Row[] = [];
  for (let round = 1; round <= o.rounds; round++) {
    const order = round % 2 ? ["eventClient", "raw"] as const : ["raw", "eventClient"] as const;
    for (const kind of order) rows.push(await measure(kind, round, o.subscribers, o.duration));
  }
  console.log(
    `@fw/events/client: ${o.subscribers} Deno clients of one eventServer() topic (client side):`,
  );
  console.table(rows);
  const ratios = [];
  for (let round = 1; round <= o.rounds; round++) {
    const ec = rows.find((r) => r.round === round && r.client === "eventClient")!;
    const raw = rows.find((r) => r.round === round && r.client === "raw")!;
    ratios.push({
      round,
      "receive rate eventClient/raw":
        Math.round(ec.receivedPerSecond / raw.receivedPerSecond * 100) / 100,
      "p99 eventClient/raw": Math.round(ec.p99Ms / raw.p99Ms * 100) / 100,
    });
  }
  console.table(ratios);
}
