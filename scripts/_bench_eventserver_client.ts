/**
 * The load generator of the Event Server row of `deno task bench:streams`: opens many WebSockets
 * over raw TCP (cheap enough for 10,000 from one process), counts the text frames they receive,
 * and measures publish-to-receive latency on a sample of connections. With `es` each connection
 * speaks `fw.events.v1` (`hello`, `subscribe`) and counts as open once `subscribed` arrived.
 *
 * Run as `deno run -A scripts/_bench_eventserver_client.ts <es|bare> <port> <path> <n> <sample>`.
 * Prints `{"open", "failed", "ms"}` once connected, then answers on stdin: `count`
 * (`{count, open}`), `lat-on` (start sampling), `lat` (`{n, p50, p99}` in ms since `lat-on`).
 *
 * @module
 */

import { openRaw, upgradeHead, wsTextFrames } from "./_bench_raw.ts";

const [kind, portArg, path, countArg, sampleArg] = Deno.args;
const port = Number(portArg);
const total = Number(countArg);
const sample = Number(sampleArg ?? 100);
const encoder = new TextEncoder();
const now = () => performance.timeOrigin + performance.now();
const head = upgradeHead(path);

/** A masked client text frame (mask key 0, so the payload is sent as is). */
function clientFrame(text: string): Uint8Array {
  const payload = encoder.encode(text);
  const frame = new Uint8Array(6 + payload.length);
  frame[0] = 0x81;
  frame[1] = 0x80 | payload.length;
  frame.set(payload, 6);
  return frame;
}

const hello = clientFrame('{"type":"hello","protocol":"fw.events.v1"}');
const subscribe = clientFrame('{"type":"subscribe","sub":"q","topic":"bench.quote"}');

let messages = 0;
let open = 0;
let failed = 0;
let sampling = false;
let latencies: number[] = [];

async function connection(index: number): Promise<void> {
  const raw = await openRaw(port, head, "HTTP/1.1 101");
  if (raw === undefined) {
    failed++;
    return;
  }
  const { conn, rest, buffer } = raw;
  let ready: () => void = () => {};
  const subscribed = new Promise<void>((r) => ready = r);
  let waiting = kind === "es";
  const sampled = index < sample;
  const onText = (text: string) => {
    if (waiting) {
      if (text.includes('"subscribed"')) {
        waiting = false;
        messages -= 2; // welcome and subscribed are not fan-out messages
        ready();
      }
      return;
    }
    if (!sampling) return;
    const m = /"at":([\d.]+)/.exec(text);
    if (m) latencies.push(now() - Number(m[1]));
  };
  // Only sampled connections (and es connections until subscribed) decode their frames.
  const read = wsTextFrames(() => (messages++, waiting || (sampled && sampling)), onText);
  read(rest, rest.length);
  if (kind === "es") {
    await conn.write(hello);
    await conn.write(subscribe);
  } else ready();
  const loop = (async () => {
    for (;;) {
      const n = await conn.read(buffer).catch(() => null);
      if (n === null) break;
      read(buffer, n);
    }
  })();
  await subscribed;
  open++;
  void loop.then(() => open--);
}

const started = performance.now();
const batch = 250;
for (let i = 0; i < total; i += batch) {
  await Promise.all(
    Array.from({ length: Math.min(batch, total - i) }, (_, k) => connection(i + k)),
  );
}
console.log(JSON.stringify({ open, failed, ms: Math.round(performance.now() - started) }));

function percentile(sorted: number[], p: number): number {
  if (sorted.length === 0) return NaN;
  return sorted[Math.min(sorted.length - 1, Math.floor(p * sorted.length))];
}

let buffered = "";
for await (const chunk of Deno.stdin.readable.pipeThrough(new TextDecoderStream())) {
  buffered += chunk;
  let nl: number;
  while ((nl = buffered.indexOf("\n")) >= 0) {
    const command = buffered.slice(0, nl).trim();
    buffered = buffered.slice(nl + 1);
    if (command === "count") console.log(JSON.stringify({ count: messages, open }));
    else if (command === "lat-on") {
      latencies = [];
      sampling = true;
      console.log(JSON.stringify({ sampling }));
    } else if (command === "lat") {
      sampling = false;
      const sorted = latencies.sort((a, b) => a - b);
      console.log(JSON.stringify({
        n: sorted.length,
        p50: percentile(sorted, 0.5),
        p99: percentile(sorted, 0.99),
      }));
    } else if (command === "exit") Deno.exit(0);
  }
}
