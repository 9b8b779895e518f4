/**
 * `deno task soak [--minutes 5] [--clients 250] [--workers 8]`: a bounded soak run.
 *
 * Starts `scripts/_soak_host.ts` (the example app and the streams example in one child process)
 * and, until the time is up, keeps up:
 *
 * - mixed HTTP load from `--workers` loops (reads, negotiation, validation failures, conflicts,
 *   404/405, orders that publish events), each request checked against its expected statuses;
 * - `--clients` concurrent SSE and WebSocket client slots; each client connects, stays one to six
 *   seconds and leaves, and the slot connects the next one (at least 2,000 sessions in a run; far
 *   more over five minutes). 2,000 concurrent clients overload a shared 2-core machine (the
 *   accept backlog fills and every request waits), which measures the machine, not the server;
 * - a consumer on the app's local HTTP broker handling every published order, 10% of its attempts
 *   failing (retried, and dead-lettered after the last retry).
 *
 * Every 10 s it samples the child's RSS and heap (after a full GC). It fails when memory after the
 * warm-up (the first fifth of the run, at least 30 s) grows by more than 10% (median of the last
 * three samples against the median of the first three), when any request gets an unexpected
 * status or error, when the app process has an unhandled promise rejection, when it still holds
 * more sockets after every client left than before the first came (a connection leak), when fewer
 * than 2,000 client sessions ran, or when the child does not stop cleanly on SIGTERM.
 *
 * @module
 */

import { parseArgs } from "node:util";
import { EventBus, handler, httpBrokerTransport } from "@fw/events";
import { createLogger, MemorySink } from "@fw/runtime";
import { OrderPlaced } from "../examples/app/src/topics.ts";
import { median } from "./_stats.ts";

const { values } = parseArgs({
  options: {
    minutes: { type: "string", default: "5" },
    clients: { type: "string", default: "250" },
    workers: { type: "string", default: "8" },
  },
});
const minutes = Number(values.minutes);
const clients = Number(values.clients);
const workers = Number(values.workers);
if (!(minutes > 0) || !(clients >= 0) || !(workers > 0)) {
  console.error("usage: deno task soak [--minutes 5] [--clients 250] [--workers 8]");
  Deno.exit(2);
}
const durationMs = minutes * 60_000;
const warmupMs = Math.max(30_000, durationMs / 5);
const SAMPLE_MS = 10_000;

function freePort(): number {
  const l = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  const port = (l.addr as Deno.NetAddr).port;
  l.close();
  return port;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const brokerPort = freePort();
const root = new URL("..", import.meta.url).pathname;
const child = new Deno.Command(Deno.execPath(), {
  args: ["run", "-A", "--v8-flags=--expose-gc", `${root}scripts/_soak_host.ts`],
  env: { PORT: "0", EVENTS_BROKER_PORT: String(brokerPort) },
  stdout: "piped",
  stderr: "inherit",
}).spawn();
/** Open file descriptors of the app process (Linux), to spot connections it never closes. */
function openFds(): number | undefined {
  try {
    return [...Deno.readDirSync(`/proc/${child.pid}/fd`)].length;
  } catch {
    return undefined;
  }
}
const lines = child.stdout.pipeThrough(new TextDecoderStream()).getReader();
let buffered = "";
let ready: { app: string; streams: string } | undefined;
while (ready === undefined) {
  const { value, done } = await lines.read();
  if (done) throw new Error("the soak host exited before listening");
  buffered += value;
  let nl: number;
  while ((nl = buffered.indexOf("\n")) >= 0) {
    const line = buffered.slice(0, nl);
    buffered = buffered.slice(nl + 1);
    if (line.startsWith('{"app"')) ready = JSON.parse(line);
  }
}
const { app: appUrl, streams: streamsUrl } = ready;
(async () => {
  for (;;) if ((await lines.read()).done) break;
})();

// ------------------------------------------------------------------ accounting

const counts = { requests: 0, sse: 0, ws: 0, handled: 0, failedAttempts: 0 };
/** Clients connecting or connected right now, by kind. */
const live = { sse: 0, ws: 0 };
const unexpected: string[] = [];
const fail = (what: string) => {
  if (unexpected.length < 50) unexpected.push(what);
  else if (unexpected.length === 50) unexpected.push("(more not listed)");
};
const deadline = Date.now() + durationMs;
const running = () => Date.now() < deadline;

// ------------------------------------------------------------------ HTTP load

interface Call {
  method: string;
  path: string;
  expect: number[];
  body?: () => unknown;
  headers?: Record<string, string>;
}

const order = () => ({
  id: crypto.randomUUID(),
  customer: "soak",
  items: [{ sku: "A-1", qty: 1 + Math.floor(Math.random() * 3) }],
  total: Math.round(Math.random() * 2000),
  currency: "EUR",
  placedAt: new Date().toISOString(),
});

const CALLS: Call[] = [
  { method: "GET", path: "/health", expect: [200] },
  { method: "GET", path: "/users", expect: [200] },
  { method: "GET", path: "/users", expect: [200], headers: { accept: "application/yaml" } },
  { method: "GET", path: "/users", expect: [200], headers: { accept: "application/xml" } },
  { method: "GET", path: "/users/1", expect: [200] },
  { method: "GET", path: "/users/999999", expect: [404] },
  { method: "GET", path: "/users/abc", expect: [400] },
  { method: "GET", path: "/search/users?q=ad", expect: [200] },
  { method: "GET", path: "/search/users", expect: [400] },
  { method: "POST", path: "/users", expect: [400], body: () => ({ name: "" }) },
  // (no successful POST /users: the example store keeps every user, which is growth by design)
  {
    method: "POST",
    path: "/users",
    expect: [400],
    body: () => ({ name: "Ada", email: "not-an-email", tags: [] }),
  },
  { method: "POST", path: "/orders", expect: [201], body: order },
  { method: "POST", path: "/orders", expect: [201], body: order },
  { method: "GET", path: "/nope", expect: [404] },
  { method: "DELETE", path: "/health", expect: [405] },
  { method: "GET", path: "/users", expect: [406], headers: { accept: "application/pdf" } },
];

async function httpWorker(): Promise<void> {
  let i = Math.floor(Math.random() * CALLS.length);
  while (running()) {
    const call = CALLS[i++ % CALLS.length];
    try {
      const res = await fetch(appUrl + call.path, {
        method: call.method,
        headers: { ...(call.body ? { "content-type": "application/json" } : {}), ...call.headers },
        body: call.body ? JSON.stringify(call.body()) : undefined,
      });
      await res.arrayBuffer();
      counts.requests++;
      if (!call.expect.includes(res.status)) {
        fail(`${call.method} ${call.path}: ${res.status}, expected ${call.expect.join("/")}`);
      }
    } catch (error) {
      fail(`${call.method} ${call.path}: ${(error as Error).message}`);
    }
    await sleep(2);
  }
}

// ------------------------------------------------------------------ SSE and WebSocket clients

async function sseClient(stayMs: number): Promise<void> {
  live.sse++;
  const abort = new AbortController();
  let reader: ReadableStreamDefaultReader<Uint8Array> | undefined;
  // Under load, aborting the signal alone sometimes leaves a pending body read hanging in Deno's
  // fetch; cancelling the reader as well always ends it.
  const timer = setTimeout(() => {
    abort.abort();
    reader?.cancel().catch(() => {});
  }, stayMs);
  try {
    const res = await fetch(`${streamsUrl}/feed`, {
      headers: { accept: "text/event-stream" },
      signal: abort.signal,
    });
    if (res.status !== 200) fail(`SSE /feed: ${res.status}`);
    reader = res.body!.getReader();
    for (;;) if ((await reader.read()).done) break;
  } catch (error) {
    if (!abort.signal.aborted) fail(`SSE /feed: ${(error as Error).message}`);
  } finally {
    clearTimeout(timer);
    live.sse--;
  }
  counts.sse++;
}

function wsClient(stayMs: number, n: number): Promise<void> {
  live.ws++;
  return new Promise<void>((resolve) => {
    const room = `room-${n % 20}`;
    const ws = new WebSocket(`${streamsUrl.replace("http", "ws")}/chat/${room}?name=soak${n}`);
    let timer: ReturnType<typeof setTimeout> | undefined;
    let settled = false;
    ws.onopen = () => {
      ws.send(JSON.stringify({ text: `hello from ${n}` }));
      timer = setTimeout(() => ws.close(1000), stayMs);
    };
    ws.onerror = (ev) => fail(`WebSocket /chat/${room}: ${(ev as ErrorEvent).message ?? "error"}`);
    // a close handshake that never finishes is a failure too, not a hang
    const guard = setTimeout(() => {
      if (settled) return;
      settled = true;
      fail(`WebSocket /chat/${room}: no close within ${Math.round(stayMs + 10_000)} ms`);
      try {
        ws.close();
      } catch {
        // closing already
      }
      resolve();
    }, stayMs + 10_000);
    ws.onclose = (ev) => {
      clearTimeout(timer);
      clearTimeout(guard);
      if (settled) return;
      settled = true;
      if (ev.code !== 1000 && ev.code !== 1001 && ev.code !== 1005) {
        fail(`WebSocket /chat/${room}: closed with ${ev.code} ${ev.reason}`);
      }
      counts.ws++;
      resolve();
    };
  }).finally(() => live.ws--);
}

async function clientSlot(n: number): Promise<void> {
  await sleep(Math.random() * 3_000); // spread the first connections
  let turn = 0;
  while (running()) {
    const stay = 1_000 + Math.random() * 5_000;
    if ((n + turn++) % 2 === 0) await sseClient(stay);
    else await wsClient(stay, n);
    await sleep(Math.random() * 500);
  }
}

// ------------------------------------------------------------------ events with failing handlers

const bus = new EventBus({
  logger: createLogger({ level: "error", sink: new MemorySink() }),
  transports: { local: httpBrokerTransport({ url: `http://127.0.0.1:${brokerPort}` }) },
});
await bus.add(
  handler(OrderPlaced).options({ group: "soak", maxRetries: 2, maxBackoff: 500 }).handle(() => {
    if (Math.random() < 0.1) {
      counts.failedAttempts++;
      throw new Error("soak: a failing handler (10% of attempts)");
    }
    counts.handled++;
  }),
);
await bus.start();

// ------------------------------------------------------------------ memory samples

interface Sample {
  t: number;
  rss: number;
  heapUsed: number;
}
let unhandled = 0;
const samples: Sample[] = [];
const started = Date.now();
const mb = (n: number) => (n / 1024 / 1024).toFixed(1);

async function sampler(): Promise<void> {
  while (running()) {
    await sleep(Math.min(SAMPLE_MS, Math.max(0, deadline - Date.now())));
    try {
      const m = await (await fetch(`${appUrl}/__soak/memory`)).json();
      const s = { t: Math.round((Date.now() - started) / 1000), rss: m.rss, heapUsed: m.heapUsed };
      samples.push(s);
      if (unexpected.length && samples.length === 1) console.log(unexpected.slice(0, 5));
      unhandled = m.unhandled;
      console.log(
        `t=${s.t}s rss=${mb(s.rss)}MB heap=${
          mb(s.heapUsed)
        }MB requests=${counts.requests} sse=${counts.sse} ws=${counts.ws} live-sse=${live.sse} live-ws=${live.ws} events=${counts.handled} failed-attempts=${counts.failedAttempts} unexpected=${unexpected.length} unhandled-rejections=${unhandled}`,
      );
    } catch (error) {
      fail(`memory sample: ${(error as Error).message}`);
    }
  }
}

const fdsBefore = openFds();
console.log(
  `soak: ${minutes} min, ${clients} SSE/WebSocket clients, ${workers} HTTP workers; app ${appUrl}, streams ${streamsUrl}`,
);
await Promise.all([
  sampler(),
  ...Array.from({ length: workers }, httpWorker),
  ...Array.from({ length: clients }, (_, n) => clientSlot(n)),
]);
await sleep(3_000); // let the last deliveries and closing connections settle
await bus.stop();
const fdsAfter = openFds();

// ------------------------------------------------------------------ verdict

try {
  child.kill("SIGTERM");
} catch {
  // already gone: its exit code says how
}
const status = await child.status;
const afterWarmup = samples.filter((s) => s.t * 1000 >= warmupMs);
const problems: string[] = [];
if (fdsBefore !== undefined && fdsAfter !== undefined) {
  console.log(`app file descriptors: ${fdsBefore} before the clients, ${fdsAfter} after they left`);
  if (fdsAfter > fdsBefore + 20) {
    problems.push(`the app holds ${fdsAfter - fdsBefore} more descriptors after every client left`);
  }
}
if (counts.sse + counts.ws < 2_000) {
  problems.push(`only ${counts.sse + counts.ws} SSE/WebSocket sessions ran (2,000 expected)`);
}
if (unhandled) problems.push(`${unhandled} unhandled promise rejections in the app process`);
if (status.code !== 0) problems.push(`the app exited with ${status.code} on SIGTERM`);
if (unexpected.length) problems.push(`unexpected results:\n  ${unexpected.join("\n  ")}`);
if (afterWarmup.length >= 4) {
  const head = afterWarmup.slice(0, 3), tail = afterWarmup.slice(-3);
  for (const key of ["rss", "heapUsed"] as const) {
    const before = median(head.map((s) => s[key])), after = median(tail.map((s) => s[key]));
    const growth = after / before - 1;
    console.log(
      `${key}: ${mb(before)}MB after warm-up -> ${mb(after)}MB at the end (${
        (growth * 100).toFixed(1)
      }%)`,
    );
    if (growth > 0.1) problems.push(`${key} grew by ${(growth * 100).toFixed(1)}% after warm-up`);
  }
} else {
  console.log("too few samples after the warm-up to judge memory (run at least 2 minutes)");
}
console.log(
  `totals: ${counts.requests} requests, ${counts.sse} SSE and ${counts.ws} WebSocket sessions, ${counts.handled} events handled, ${counts.failedAttempts} failed attempts`,
);
if (problems.length) {
  console.error(`soak FAILED:\n- ${problems.join("\n- ")}`);
  Deno.exit(1);
}
console.log("soak passed");
