/**
 * `deno task bench:streams`: how many idle stream connections one server holds, what each costs
 * in server memory, and how many messages per second it fans out, for fw and for a bare
 * `Deno.serve` baseline in the same run.
 *
 * 1. Idle: `--connections` (10,000) SSE streams, then as many WebSockets, are opened against one
 *    server process and held; the server's RSS after a full GC, before and after, gives the
 *    memory per connection. fw's streams carry their real per-connection state (heartbeat timer,
 *    abort signal, handler, validators). Two references run beside bare and fw (unless
 *    `--servers` is given): `bare+signal`, bare whose connections also hold the abort signal and
 *    listener fw's idle handler holds, and `fw-nosignal`, fw with an idle handler that holds
 *    none; the ratios fw/bare, fw/bare+signal and fw-nosignal/bare are printed.
 * 2. Fan-out: `--subscribers` (1,000) connections subscribe; the server publishes in batches as
 *    fast as the slowest subscriber takes them (fw: `ctx.send()` back-pressure) for `--duration`
 *    seconds (5); the client counts what actually arrives.
 *
 * Server and load generator run in separate processes (the generator uses raw TCP so one process
 * can hold 10,000 connections). Each process raises its soft open-file limit to the hard limit;
 * holding N connections needs N + ~50 descriptors in the server and N in the generator, which is
 * why the SSE and WebSocket sets are held one after the other when the hard limit is 20,000.
 *
 * 3. Event Server (`scripts/_bench_eventserver.ts`): `--es-subscribers` (10,000) WebSocket
 *    subscribers of fw's `eventServer()` against bare `Deno.serve`, alternating over `--rounds` (2):
 *    RSS per connection, publish-to-receive p50/p99, fan-out, and their ratios.
 *
 * 4. Client (`scripts/_bench_client.ts`): `--client-subscribers` (1,000) Deno `eventClient`s against
 *    a raw `fw.events.v1` WebSocket client: client-side receive rate and end-to-end p99.
 *
 * Options: `--connections <n>`, `--subscribers <n>`, `--duration <s>`, `--batch <n>` (messages per
 * publish round, 10), `--only idle|fanout|eventserver|client`, `--servers fw,bare`, `--es-subscribers <n>`,
 * `--rounds <n>`.
 *
 * @module
 */

import { Child } from "./_bench_child.ts";
import { checkBaseline } from "./_quiet.ts";

const args = Object.fromEntries(
  Deno.args.map((a, i, all) => a.startsWith("--") ? [a.slice(2), all[i + 1]] : [])
    .filter((x) => x.length),
);
const connections = Number(args.connections ?? 10_000);
const subscribers = Number(args.subscribers ?? 1_000);
const duration = Number(args.duration ?? 5);
const batch = Number(args.batch ?? 10);
const servers = (args.servers ?? "bare,fw").split(",");
const only = args.only as "idle" | "fanout" | "eventserver" | "client" | undefined;
const dir = new URL(".", import.meta.url).pathname;

function server(kind: string): Child {
  return new Child(["--v8-flags=--expose-gc", `${dir}_bench_streams_server.ts`, kind]);
}

function client(kind: "sse" | "ws", port: number, path: string, n: number): Child {
  return new Child([`${dir}_bench_streams_client.ts`, kind, String(port), path, String(n)]);
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const kb = (bytes: number) => (bytes / 1024).toFixed(1);

interface IdleResult {
  server: string;
  transport: string;
  held: number;
  failed: number;
  connectMs: number;
  rssPerConnKb: string;
  heapPerConnKb: string;
  rssMb: string;
}

async function idle(kind: string, transport: "sse" | "ws"): Promise<IdleResult> {
  const s = server(kind);
  const { port } = await s.read();
  const before = await s.ask("mem");
  const c = client(transport, port, "/idle", connections);
  const opened = await c.read();
  await sleep(1000);
  const after = await s.ask("mem");
  const { open } = await c.ask("count");
  await c.close();
  await s.close();
  return {
    server: kind,
    transport,
    held: open,
    failed: opened.failed,
    connectMs: opened.ms,
    rssPerConnKb: kb((after.rss - before.rss) / open),
    heapPerConnKb: kb((after.heap - before.heap) / open),
    rssMb: (after.rss / 1024 / 1024).toFixed(0),
  };
}

interface FanoutResult {
  server: string;
  transport: string;
  subscribers: number;
  messagesPerSecond: number;
  published: number;
}

async function fanout(kind: string, transport: "sse" | "ws"): Promise<FanoutResult> {
  const s = server(kind);
  const { port } = await s.read();
  const c = client(transport, port, "/fanout", subscribers);
  const opened = await c.read();
  while ((await s.ask("subs")).subs < opened.open) await sleep(50);
  await s.ask(`start ${batch}`);
  await sleep(500); // warm up
  const c0 = await c.ask("count");
  const t0 = performance.now();
  await sleep(duration * 1000);
  const c1 = await c.ask("count");
  const t1 = performance.now();
  const { published } = await s.ask("stop");
  await c.close();
  await s.close();
  return {
    server: kind,
    transport,
    subscribers: c1.open,
    messagesPerSecond: Math.round((c1.count - c0.count) / ((t1 - t0) / 1000)),
    published,
  };
}

console.log(
  `bench:streams: ${connections} idle connections per transport, fan-out to ${subscribers} ` +
    `subscribers for ${duration}s (batch ${batch}), servers ${servers.join(", ")}\n`,
);
if (only !== "fanout" && only !== "eventserver" && only !== "client") {
  const rows: IdleResult[] = [];
  // Beside bare and fw, the idle set holds two references: `bare+signal` keeps the abort signal
  // and listener fw's idle handler keeps (the same app state), `fw-nosignal` is fw with a handler
  // that keeps none (what fw itself holds).
  const idleServers = args.servers ? servers : ["bare", "bare+signal", "fw", "fw-nosignal"];
  for (const transport of ["sse", "ws"] as const) {
    for (const kind of idleServers) rows.push(await idle(kind, transport));
  }
  console.log("Idle connections held (server RSS after a full GC):");
  console.table(rows);
  const per = (server: string, transport: string) =>
    Number(rows.find((r) => r.server === server && r.transport === transport)?.rssPerConnKb);
  const ratio = (a: string, b: string, t: string) => {
    const x = per(a, t) / per(b, t);
    return Number.isFinite(x) ? x.toFixed(2) : "-";
  };
  // memory per connection does not depend on the machine's load: no baseline check
  console.log("RSS per idle connection, ratios (target fw/bare <= 1.1):");
  console.table(["sse", "ws"].map((t) => ({
    transport: t,
    "fw / bare": ratio("fw", "bare", t),
    "fw / bare+signal": ratio("fw", "bare+signal", t),
    "fw-nosignal / bare": ratio("fw-nosignal", "bare", t),
  })));
}
if (only !== "idle" && only !== "eventserver" && only !== "client") {
  const rows: FanoutResult[] = [];
  for (const transport of ["sse", "ws"] as const) {
    for (const kind of servers) rows.push(await fanout(kind, transport));
  }
  console.log("Fan-out (messages received per second, summed over subscribers):");
  console.table(rows);
  for (const transport of ["sse", "ws"] as const) {
    const bare = rows.find((r) => r.server === "bare" && r.transport === transport);
    if (bare !== undefined) {
      console.log(checkBaseline(`streams/fanout/${transport}/bare`, bare.messagesPerSecond).text);
    }
  }
}
if (only === undefined || only === "eventserver") {
  const { benchEventServer } = await import("./_bench_eventserver.ts");
  await benchEventServer({
    subscribers: Number(args["es-subscribers"] ?? 10_000),
    duration,
    batch,
    rounds: Number(args.rounds ?? 2),
  });
}
if (only === undefined || only === "client") {
  const { benchClient } = await import("./_bench_client.ts");
  await benchClient({
    subscribers: Number(args["client-subscribers"] ?? 1_000),
    duration,
    rounds: Number(args.rounds ?? 2),
  });
}
