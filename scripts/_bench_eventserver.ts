/**
 * The Event Server row of `deno task bench:streams`: `--es-subscribers` (10,000) WebSocket
 * subscribers on one server, fw's `eventServer()` (clients speak `fw.events.v1`) against a bare
 * `Deno.serve` WebSocket fan-out, in the same run, in alternating order over `--rounds` (2).
 *
 * Per server and round: server RSS per connection (after a full GC, subscribers connected and
 * idle), publish-to-receive latency p50/p99 (10 messages, spaced so that delivery stays well below
 * fan-out capacity: subscribers / 10 ms apart, at least 20 ms; measured on 200 sampled connections
 * with the machine's one clock; it includes the load generator reading all its sockets in one
 * process; for eventServer also through `POST /events/publish`: httpP50Ms/httpP99Ms), and fan-out
 * (messages received
 * per second, summed over subscribers, publishing batches back to back for `--duration` s).
 * Targets: fan-out >= 0.8x bare, RSS per connection <= 1.3x bare.
 *
 * @module
 */

import { Child } from "./_bench_child.ts";
import { checkBaseline, verdict } from "./_quiet.ts";
import { median } from "./_stats.ts";

const dir = new URL(".", import.meta.url).pathname;

/** Options of {@linkcode benchEventServer}. */
export interface EventServerBenchOptions {
  /** WebSocket subscribers per server (10,000 is the documented full size). */
  readonly subscribers: number;
  /** Fan-out measurement time in seconds. */
  readonly duration: number;
  /** Messages per publish round. */
  readonly batch: number;
  /** Rounds; the order of the two servers alternates. */
  readonly rounds: number;
}

interface Row {
  round: number;
  server: string;
  subscribers: number;
  failed: number;
  rssPerConnKb: number;
  heapPerConnKb: number;
  p50Ms: number;
  p99Ms: number;
  latencySamples: number;
  httpP50Ms: number | string;
  httpP99Ms: number | string;
  messagesPerSecond: number;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const round1 = (n: number) => Math.round(n * 10) / 10;
const round2 = (n: number) => Math.round(n * 100) / 100;

async function measure(
  kind: "es" | "bare",
  o: EventServerBenchOptions,
  round: number,
): Promise<Row> {
  const server = new Child(["--v8-flags=--expose-gc", `${dir}_bench_eventserver_server.ts`, kind]);
  const { port } = await server.read();
  const before = await server.ask("mem");
  const client = new Child([
    `${dir}_bench_eventserver_client.ts`,
    kind,
    String(port),
    "/events/ws",
    String(o.subscribers),
    "200",
  ]);
  try {
    const opened = await client.read();
    while ((await server.ask("subs")).subs < opened.open) await sleep(50);
    await sleep(1000);
    const after = await server.ask("mem");
    // Latency at a rate well below fan-out capacity (10,000 subscribers: one message a second),
    // so it measures the path, not a queue.
    const every = Math.max(20, Math.ceil(o.subscribers / 10));
    await client.ask("lat-on");
    await server.ask(`tick 10 ${every}`);
    await sleep(300);
    const lat = await client.ask("lat");
    let http = { p50: NaN, p99: NaN };
    if (kind === "es") {
      await client.ask("lat-on");
      await server.ask(`tickhttp 10 ${every}`);
      await sleep(300);
      http = await client.ask("lat");
    }
    await server.ask(`start ${o.batch}`);
    await sleep(500);
    const c0 = await client.ask("count");
    const t0 = performance.now();
    await sleep(o.duration * 1000);
    const c1 = await client.ask("count");
    const t1 = performance.now();
    await server.ask("stop");
    return {
      round,
      server: kind === "es" ? "eventServer" : "bare",
      subscribers: c1.open,
      failed: opened.failed,
      rssPerConnKb: round1((after.rss - before.rss) / 1024 / opened.open),
      heapPerConnKb: round1((after.heap - before.heap) / 1024 / opened.open),
      p50Ms: round2(lat.p50),
      p99Ms: round2(lat.p99),
      latencySamples: lat.n,
      httpP50Ms: kind === "es" ? round2(http.p50) : "-",
      httpP99Ms: kind === "es" ? round2(http.p99) : "-",
      messagesPerSecond: Math.round((c1.count - c0.count) / ((t1 - t0) / 1000)),
    };
  } finally {
    await client.close();
    await server.close();
  }
}

/**
 * Runs the Event Server row and prints its tables.
 *
 * @param o Sizes.
 */
export async function benchEventServer(o: EventServerBenchOptions): Promise<void> {
  console.log(
    `\nEvent Server: ${o.subscribers} WebSocket subscribers, eventServer() vs bare Deno.serve, ` +
      `${o.rounds} rounds (alternating order), fan-out for ${o.duration}s (batch ${o.batch})`,
  );
  const rows: Row[] = [];
  const ratios: { round: number; fanout: number; rss: number; p50: number; p99: number }[] = [];
  for (let r = 1; r <= o.rounds; r++) {
    const order: ("es" | "bare")[] = r % 2 ? ["bare", "es"] : ["es", "bare"];
    const got: Partial<Record<"es" | "bare", Row>> = {};
    for (const kind of order) rows.push(got[kind] = await measure(kind, o, r));
    const es = got.es!, bare = got.bare!;
    ratios.push({
      round: r,
      fanout: round2(es.messagesPerSecond / bare.messagesPerSecond),
      rss: round2(es.rssPerConnKb / bare.rssPerConnKb),
      p50: round2(es.p50Ms / bare.p50Ms),
      p99: round2(es.p99Ms / bare.p99Ms),
    });
  }
  console.table(rows);
  console.log("Ratios eventServer / bare per round (fan-out target >= 0.8, RSS target <= 1.3):");
  console.table(ratios);
  const med = (k: "fanout" | "rss" | "p50" | "p99") => round2(median(ratios.map((x) => x[k])));
  console.log(
    `Median ratios: fan-out ${med("fanout")}x, RSS per connection ${med("rss")}x, ` +
      `latency p50 ${med("p50")}x, p99 ${med("p99")}x`,
  );
  const check = checkBaseline(
    "streams/eventserver/bare",
    median(rows.filter((x) => x.server === "bare").map((x) => x.messagesPerSecond)),
  );
  console.log(check.text);
  console.log(
    verdict(
      [check],
      `fan-out ${med("fanout")}x (target >= 0.8): ${med("fanout") >= 0.8 ? "met" : "NOT met"}; ` +
        `RSS per connection ${med("rss")}x (target <= 1.3): ${
          med("rss") <= 1.3 ? "met" : "NOT met"
        }`,
    ),
  );
}
