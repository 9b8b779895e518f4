/**
 * The load generator of `scripts/bench_streams.ts`: opens many SSE or WebSocket connections over
 * raw TCP (cheap enough to hold 10,000 from one process) and counts the messages they receive
 * (SSE events end with a blank line; WebSocket text frames are parsed from their headers).
 *
 * Run as `deno run -A scripts/_bench_streams_client.ts <sse|ws> <port> <path> <connections>`.
 * Prints `{"open": n, "failed": n, "ms": t}` once connected, then answers `count` on stdin with
 * `{"count": messages, "open": n}`.
 *
 * @module
 */

import { openRaw, upgradeHead, wsTextFrames } from "./_bench_raw.ts";

const [kind, portArg, path, countArg] = Deno.args;
const port = Number(portArg);
const total = Number(countArg);
const head = kind === "ws" ? upgradeHead(path) : new TextEncoder().encode(
  `GET ${path} HTTP/1.1\r\nHost: 127.0.0.1\r\nAccept: text/event-stream\r\n\r\n`,
);

let messages = 0;
let open = 0;
let failed = 0;

/** Counts SSE events: blank lines, also across reads. */
function sseCounter(): (bytes: Uint8Array, n: number) => void {
  let prev = 0;
  return (bytes, n) => {
    for (let i = 0; i < n; i++) {
      const b = bytes[i];
      if (b === 10 && prev === 10) messages++;
      prev = b;
    }
  };
}

async function connection(): Promise<void> {
  const raw = await openRaw(port, head, kind === "ws" ? "HTTP/1.1 101" : "HTTP/1.1 200");
  if (raw === undefined) {
    failed++;
    return;
  }
  const { conn, rest, buffer } = raw;
  open++;
  const count = kind === "ws" ? wsTextFrames(() => (messages++, false)) : sseCounter();
  count(rest, rest.length);
  void (async () => {
    for (;;) {
      const n = await conn.read(buffer).catch(() => null);
      if (n === null) break;
      count(buffer, n);
    }
    open--;
  })();
}

const started = performance.now();
const batch = 250;
for (let i = 0; i < total; i += batch) {
  await Promise.all(Array.from({ length: Math.min(batch, total - i) }, connection));
}
console.log(JSON.stringify({ open, failed, ms: Math.round(performance.now() - started) }));

let buffered = "";
for await (const chunk of Deno.stdin.readable.pipeThrough(new TextDecoderStream())) {
  buffered += chunk;
  let nl: number;
  while ((nl = buffered.indexOf("\n")) >= 0) {
    const command = buffered.slice(0, nl).trim();
    buffered = buffered.slice(nl + 1);
    if (command === "count") console.log(JSON.stringify({ count: messages, open }));
    if (command === "exit") Deno.exit(0);
  }
}
