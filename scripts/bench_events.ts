/**
 * `deno task bench:events`: publish-to-handled throughput and latency of the event transports,
 * with payload validation on, beside a bare in-process queue doing the same work in the same run.
 *
 * For each system and each handler concurrency (1 and 100), `--messages` (1,000,000; for Deno KV
 * `--kv-messages`, 2,000, as its local queue hands out about a thousand a second) messages are published as fast as the system accepts them; the clock
 * stops when the handler has seen the last one. Latency is publish call to handler entry, per
 * message (p50 and p99). Rounds alternate between systems to cancel drift; the best round counts.
 * A warm-up round (`--warmup`, 1) runs every system at each concurrency first and is not counted:
 * the first round of fw's rows ran 10-40% slower than the later ones (its code and the heap still
 * warming up; `bare`, a few lines, warms at once), so a three-round median counted warm-up against
 * fw and varied from run to run.
 *
 * Systems:
 * - `bare`: a compiled validator, an array queue and a worker loop with the same concurrency
 *   limit calling the same handler (the floor any broker pays);
 * - `floor`: `bare` plus what every fw message needs and `bare` skips, done as fw does it: a
 *   message id and a trace id, the publish time (a clock read) and an async-context frame per
 *   handler call (the handler's start, for its time-out, is stamped once per tick, no read per
 *   message, as fw does when it records no durations); and, as fw's in-process path does, the
 *   handler gets a copy of the payload validated at publish (the validator's copier) instead of a
 *   second validation; `memory / floor` is the part of the gap that fw's own code could still
 *   close;
 * - `memory`: `getPublisher()` -> `EventBus` -> `MemoryBroker` -> consumer (context, DI scope,
 *   time-out, metrics, completion log at `warn` level so lines are not printed);
 * - `denokv`: the same over `@fw/events/denokv` on a temporary file (when that sub-path exists),
 *   beside `denokv-raw`, the same payloads straight on `kv.enqueue` / `kv.listenQueue` (its peer;
 *   the handler concurrency does not apply to it);
 * - `nats`: the same over `@fw/events/cloud` with the NATS JetStream client on 127.0.0.1:4222
 *   (`--nats-messages`, 10,000; skipped with the reason when no NATS answers; `_bench_nats.ts`),
 *   beside `nats-raw`, the same messages straight on the NATS client (its peer; the handler
 *   concurrency does not apply to it); `nats-r1` and `nats-r3`, the same as `nats` on a single
 *   server and on a three-node cluster that the benchmark starts itself (`nats-server` on free
 *   ports; every cluster stream with three replicas), and a table of the cluster's median rate
 *   beside the single server's with the per-round ratios.
 *
 * Publishers keep at most `--window` (1,000) messages published but not yet handled, so the run
 * measures a steady state rather than a backlog growing in memory.
 *
 * Options: `--messages <n>`, `--kv-messages <n>`, `--window <n>`, `--rounds <n>` (3), `--warmup <n>` (1),
 * `--nats-messages <n>`, `--only bare,floor,memory,memory-traced,denokv,nats,nats-raw,nats-r3,sql`
 * (`denokv` runs `denokv-raw` and `denokv`; `nats` runs `nats-raw`, `nats`, `nats-r1` and
 * `nats-r3`; `nats-raw` the first two, without the cluster; `nats-r3` the last two), `--traced` (only `memory` and `memory-traced`: every
 * publish and delivery traced with an always-on sampler and a batching exporter,
 * `_bench_tracing.ts`; the table adds the median msg/s of both and their per-round ratios).
 *
 * Redis (`scripts/_bench_redis.ts`): fw's Redis Streams transport beside BullMQ and a bare Redis
 * Streams loop on the same Redis, 100,000 jobs at concurrency 1 and 50, and fw on a private single
 * redis-server beside a three-master Redis Cluster, both started by the bench on this machine
 * (one and three partitions), with per-round ratios to the single server. Options:
 * `--redis-messages <n>`, `--redis-rounds <n>` (3), `--redis-url <url>`, `--only
 * redis|fw-redis,fw-node,fw-node-p3,fw-cluster,fw-cluster-p3,bullmq,raw-redis,raw-envelope`.
 *
 * It ends with the goals' verdicts (the median of the per-round rate ratios, CPU ratio beside it):
 * memory / bare >= 0.75, nats / nats-raw >= 0.85, fw-redis / raw-redis >= 0.8 and fw sql /
 * raw-sql >= 0.7, each printed only when its baseline ran within 1.5x of its quiet figure in
 * `scripts/_quiet.ts` (else `no verdict: the machine is loaded`), with the load average.
 *
 * `sql`: fw's PostgreSQL transport beside pg-boss and `raw-sql` (a bare `FOR UPDATE SKIP LOCKED`
 * loop with `LISTEN` wake-ups on postgres.js, the floor) on the same database, in a table of its
 * own (`_bench_sql.ts`; `--sql-messages` 20,000, `--sql-rounds` 2, `--boss-notify`, `--only-sql
 * fw,boss,raw`).
 *
 * `delayed` (`_bench_delayed.ts`): 100,000 delayed messages due within one second on Redis beside
 * BullMQ delayed jobs and on PostgreSQL beside pg-boss `startAfter` (throughput after the due time,
 * lateness), and 10,000 spread over 10 s on every transport (lateness against its target, beside
 * Deno KV's own delayed enqueue).
 * `--delayed` runs only these rows (the quick rerun); `--delayed-burst <n>`, `--delayed-spread
 * <n>`, `--delayed-lead <ms>`, `--delayed-rounds <n>`, `--delayed-systems
 * redis,bullmq,sql,pg-boss,memory,nats,denokv`, `--delayed-part burst|spread`.
 *
 * @module
 */

import { cpuUsage } from "node:process";
import {
  compile,
  copierOf,
  createLogger,
  Int,
  MinLength,
  runInNewContext,
  systemClock,
  type Tracer,
  Uuid,
} from "@fw/runtime";
import {
  EventBus,
  getPublisher,
  handler,
  MemoryBroker,
  newMessageId,
  newTraceId,
  topic,
  type Transport,
} from "@fw/events";
import { natsBenchTransport, natsClusterBench, runRawNats } from "./_bench_nats.ts";
import { benchTracer, benchTracerProvider, sdkMessageSpans } from "./_bench_tracing.ts";
import { type BaselineCheck, checkBaseline, loadAverage, QUIET, verdict } from "./_quiet.ts";
import { median } from "./_stats.ts";

const args = Object.fromEntries(
  Deno.args.map((a, i, all) => a.startsWith("--") ? [a.slice(2), all[i + 1]] : [])
    .filter((x) => x.length),
);
// 1,000,000: a run of 200,000 lasted about 100 ms on a quiet machine, and the fixed cost of each
// run (a new bus and consumer whose code warms up again) weighed in it: memory / bare measured
// 0.75 and 0.78 at concurrency 1 with 200,000 messages and 0.82 with 1,000,000, same hour
// (2026-11-29). The goal is about the steady state.
const MESSAGES = Number(args.messages ?? 1_000_000);
const KV_MESSAGES = Number(args["kv-messages"] ?? 2_000);
const NATS_MESSAGES = Number(args["nats-messages"] ?? 10_000);
const ROUNDS = Number(args.rounds ?? 3);
const WARMUP = Number(args.warmup ?? 1);
const WINDOW = Number(args.window ?? 1000);
// `--traced`: the memory broker untraced and traced only, for a quick rerun of the tracing cost.
const only = "delayed" in args
  ? new Set(["delayed"])
  : args.only
  ? new Set(String(args.only).split(","))
  : Deno.args.includes("--traced")
  ? new Set(["memory", "memory-traced", "memory+sdk"])
  : undefined;

const Payload = { id: Uuid, customer: MinLength(1), items: Int, total: Int };
const Order = topic("bench.order", Payload);
const ID = "6f1c2a5e-8a3b-4f1e-9d2c-1b2a3c4d5e6f";

interface Result {
  rate: number;
  p50: number;
  p99: number;
  /** Process CPU time (user + system) per message, ns: steadier than the rate on a busy machine. */
  cpuNs?: number;
}

function percentile(sorted: Float64Array, p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.floor(sorted.length * p))];
}

function summarize(
  n: number,
  elapsedMs: number,
  latencies: Float64Array,
  cpu0?: ReturnType<typeof cpuUsage>,
): Result {
  const cpu = cpu0 && cpuUsage(cpu0);
  latencies.sort();
  return {
    rate: n / (elapsedMs / 1000),
    p50: percentile(latencies, 0.5),
    p99: percentile(latencies, 0.99),
    ...(cpu ? { cpuNs: ((cpu.user + cpu.system) * 1000) / n } : {}),
  };
}

/** Lets a publisher run at most WINDOW messages ahead of the handler. */
class Window {
  handled = 0;
  #wake: (() => void) | undefined;
  #waitFor = 0;
  /** Call from the handler. */
  done(): void {
    this.handled++;
    if (this.#wake && this.handled >= this.#waitFor) {
      const wake = this.#wake;
      this.#wake = undefined;
      wake();
    }
  }
  /** Resolves once the handler is less than WINDOW behind message `i`. */
  room(i: number): Promise<void> | undefined {
    if (i - this.handled < WINDOW) return undefined;
    this.#waitFor = i - (WINDOW >> 1);
    return new Promise((r) => this.#wake = r);
  }
}

/**
 * The bare baseline: validate, enqueue, run with a concurrency limit. With `floor`, it also does
 * the per-message work every fw message needs and the bare queue skips, the same way fw does it:
 * a message id and a trace id, the publish time from the clock and an async-context frame for
 * the handler (whose start fw stamps once per tick, not per message); and it hands the
 * handler a copy of the payload validated at publish, as fw's in-process path does, where `bare`
 * validates it again.
 */
async function runBare(n: number, concurrency: number, floor = false): Promise<Result> {
  const validate = compile(Payload, "payload");
  const copy = copierOf(validate)! as (value: unknown) => unknown;
  const latencies = new Float64Array(n);
  type Item = {
    payload: unknown;
    at: number;
    i: number;
    id?: string;
    traceId?: string;
    publishedAt?: number;
  };
  const queue: Item[] = [];
  let head = 0, running = 0;
  const window = new Window();
  let done!: () => void;
  const finished = new Promise<void>((r) => done = r);
  const handle = async (item: Item, _payload?: unknown) => {
    latencies[item.i] = performance.now() - item.at;
    await Promise.resolve();
  };
  const work = (item: Item) => {
    if (!floor) {
      const checked = validate(item.payload);
      if (!checked.ok) throw new Error("invalid");
      return handle(item, checked.value);
    }
    const payload = copy(item.payload);
    return runInNewContext({ traceId: item.traceId, id: item.id }, handle, item, payload);
  };
  const pump = () => {
    while (head < queue.length && running < concurrency) {
      // taken items are released, as any queue does (a queue that kept all n alive made the
      // baseline pay for their garbage collection, which flattered every ratio against it)
      const item = queue[head];
      queue[head++] = undefined!;
      if (head === queue.length) queue.length = head = 0;
      running++;
      work(item).finally(() => {
        running--;
        window.done();
        if (window.handled === n) done();
        else pump();
      });
    }
  };
  const cpu0 = cpuUsage();
  const start = performance.now();
  for (let i = 0; i < n; i++) {
    const checked = validate({ id: ID, customer: "c", items: i, total: 5 });
    if (!checked.ok) throw new Error("invalid");
    const payload = checked.value;
    if (floor) {
      queue.push({
        payload,
        at: performance.now(),
        i,
        id: newMessageId(),
        traceId: newTraceId(),
        publishedAt: systemClock.now(),
      });
    } else queue.push({ payload, at: performance.now(), i });
    pump();
    const wait = window.room(i);
    if (wait) await wait;
  }
  await finished;
  return summarize(n, performance.now() - start, latencies, cpu0);
}

/** fw over a transport. */
async function runFw(
  transport: Transport,
  n: number,
  concurrency: number,
  tracer?: Tracer,
  handSpans?: (topic: string, id: string) => void,
): Promise<Result> {
  const latencies = new Float64Array(n);
  const sent = new Float64Array(n);
  const window = new Window();
  let done!: () => void;
  const finished = new Promise<void>((r) => done = r);
  const bus = new EventBus({
    transports: { main: transport },
    logger: createLogger({ level: "warn" }),
    ...(tracer ? { tracer } : {}),
  });
  await bus.add(
    handler(Order).options({ group: "bench", concurrency }).handle(async (msg) => {
      const i = msg.payload.items;
      latencies[i] = performance.now() - sent[i];
      handSpans?.(Order.name, msg.payload.id);
      await Promise.resolve();
      window.done();
      if (window.handled === n) done();
    }),
  );
  await bus.start();
  const publish = getPublisher(Order, { bus });
  const cpu0 = cpuUsage();
  const start = performance.now();
  const inflight: Promise<unknown>[] = [];
  for (let i = 0; i < n; i++) {
    sent[i] = performance.now();
    inflight.push(publish({ id: ID, customer: "c", items: i, total: 5 }));
    if (inflight.length >= 256) {
      await Promise.all(inflight);
      inflight.length = 0;
    }
    const wait = window.room(i);
    if (wait) await wait;
  }
  await Promise.all(inflight);
  await finished;
  const result = summarize(n, performance.now() - start, latencies, cpu0);
  await bus.stop();
  return result;
}

/**
 * Deno KV's own queue, the `denokv` row's peer: `kv.enqueue` of the validated payload (256 in
 * flight, within the window) and `kv.listenQueue` validating it, on a temporary file.
 */
async function runRawKv(n: number): Promise<Result> {
  const validate = compile(Payload, "payload");
  const path = await Deno.makeTempFile({ suffix: ".kv" });
  const kv = await Deno.openKv(path);
  const latencies = new Float64Array(n);
  const sent = new Float64Array(n);
  const window = new Window();
  let done!: () => void;
  const finished = new Promise<void>((r) => done = r);
  const listening = kv.listenQueue((payload: { items: number }) => {
    if (!validate(payload).ok) throw new Error("invalid");
    latencies[payload.items] = performance.now() - sent[payload.items];
    window.done();
    if (window.handled === n) done();
  });
  try {
    const cpu0 = cpuUsage();
    const start = performance.now();
    const inflight: Promise<unknown>[] = [];
    for (let i = 0; i < n; i++) {
      sent[i] = performance.now();
      const payload = { id: ID, customer: "c", items: i, total: 5 };
      if (!validate(payload).ok) throw new Error("invalid");
      inflight.push(kv.enqueue(payload));
      if (inflight.length >= 256) await Promise.all(inflight.splice(0));
      const wait = window.room(i);
      if (wait) await wait;
    }
    await Promise.all(inflight);
    await finished;
    return summarize(n, performance.now() - start, latencies, cpu0);
  } finally {
    kv.close();
    await listening;
    await Deno.remove(path).catch(() => {});
  }
}

async function kvTransport(): Promise<(() => Promise<Transport>) | undefined> {
  try {
    const mod = await import("@fw/events/denokv") as {
      denoKvTransport: (o: { path: string }) => Transport;
    };
    return async () => mod.denoKvTransport({ path: await Deno.makeTempFile({ suffix: ".kv" }) });
  } catch (err) {
    console.error(`denokv skipped: ${err instanceof Error ? err.message : err}`);
    return undefined;
  }
}

const systems: Array<[string, number, (c: number, n: number) => Promise<Result>]> = [];
if (!only || only.has("bare")) systems.push(["bare", MESSAGES, (c, n) => runBare(n, c)]);
if (!only || only.has("floor")) systems.push(["floor", MESSAGES, (c, n) => runBare(n, c, true)]);
if (!only || only.has("memory")) {
  systems.push(["memory", MESSAGES, (c, n) => runFw(new MemoryBroker(), n, c)]);
}
if (!only || only.has("memory-traced") || only.has("traced")) {
  // Every publish and every delivery traced: always-on sampler, batching exporter.
  const { tracer } = await benchTracer();
  systems.push(["memory-traced", MESSAGES, (c, n) => runFw(new MemoryBroker(), n, c, tracer)]);
}
if (!only || only.has("memory+sdk") || only.has("traced")) {
  // The platform floor: untraced fw, plus the same two spans per message made straight
  // through the SDK (same provider setup) by the handler, with no fw code around them.
  const spans = sdkMessageSpans(benchTracerProvider());
  systems.push([
    "memory+sdk",
    MESSAGES,
    (c, n) => runFw(new MemoryBroker(), n, c, undefined, spans),
  ]);
}
if (!only || only.has("denokv")) {
  const make = await kvTransport();
  if (make) {
    systems.push(["denokv-raw", KV_MESSAGES, (_c, n) => runRawKv(n)]);
    systems.push(["denokv", KV_MESSAGES, async (c, n) => runFw(await make(), n, c)]);
  }
}
if (!only || only.has("nats") || only.has("nats-raw")) {
  const make = await natsBenchTransport();
  if (make) {
    systems.push(["nats-raw", NATS_MESSAGES, async (_c, n) => {
      const cpu0 = cpuUsage();
      const r = await runRawNats(n, WINDOW);
      const cpu = cpuUsage(cpu0);
      return { ...r, cpuNs: ((cpu.user + cpu.system) * 1000) / n };
    }]);
    systems.push(["nats", NATS_MESSAGES, async (c, n) => runFw(await make(), n, c)]);
  }
}
const natsCluster = !only || only.has("nats") || only.has("nats-r3")
  ? await natsClusterBench()
  : undefined;
if (natsCluster) {
  systems.push(["nats-r1", NATS_MESSAGES, async (c, n) => runFw(await natsCluster.single(), n, c)]);
  systems.push([
    "nats-r3",
    NATS_MESSAGES,
    async (c, n) => runFw(await natsCluster.cluster(), n, c),
  ]);
}

// Warm-up, not counted: every system once at each concurrency.
for (let round = 1; round <= (systems.length ? WARMUP : 0); round++) {
  for (const concurrency of [1, 100]) {
    for (const [name, n, run] of systems) {
      const r = await run(concurrency, n);
      console.error(
        `warm-up ${name}@${concurrency} ${Math.round(r.rate).toLocaleString("en")} msg/s${
          r.cpuNs === undefined ? "" : `, ${Math.round(r.cpuNs)} ns CPU/msg`
        } (not counted)`,
      );
    }
  }
}

const loadBefore = await loadAverage();
const best = new Map<string, Result>();
const rates = new Map<string, number[]>();
const cpus = new Map<string, number[]>();
for (let round = 1; round <= (systems.length ? ROUNDS : 0); round++) {
  for (const concurrency of [1, 100]) {
    for (const [name, n, run] of round % 2 ? systems : [...systems].reverse()) {
      const r = await run(concurrency, n);
      const key = `${name}@${concurrency}`;
      rates.set(key, [...(rates.get(key) ?? []), r.rate]);
      if (r.cpuNs !== undefined) cpus.set(key, [...(cpus.get(key) ?? []), r.cpuNs]);
      const prev = best.get(key);
      if (!prev || r.rate > prev.rate) best.set(key, r);
      console.error(
        `round ${round} ${key.padEnd(12)} ${Math.round(r.rate).toLocaleString("en")} msg/s${
          r.cpuNs === undefined ? "" : `, ${Math.round(r.cpuNs)} ns CPU/msg`
        }`,
      );
    }
  }
}

/** The baseline each row is compared with in the same round: its raw peer, else `bare`. */
const baselineOf = (name: string) =>
  name.startsWith("nats") ? "nats-raw" : name.startsWith("denokv") ? "denokv-raw" : "bare";
const fmt = (x: number) => Math.round(x).toLocaleString("en");
if (systems.length) {
  console.log(
    "\nsystem    concurrency   messages/s   p50 ms   p99 ms   vs base   CPU ns/msg   base/this CPU" +
      "   (best round; base: nats-raw for nats, denokv-raw for denokv, else bare; CPU: median)",
  );
}
for (const concurrency of systems.length ? [1, 100] : []) {
  for (const [name, n] of systems) {
    const key = `${name}@${concurrency}`;
    const base = `${baselineOf(name)}@${concurrency}`;
    const r = best.get(key)!;
    const b = best.get(base);
    const ratio = b ? (r.rate / b.rate).toFixed(2) : "-";
    const cpu = cpus.get(key);
    const bCpu = cpus.get(base);
    const cpuCells = cpu
      ? `${fmt(median(cpu)).padStart(10)}   ${bCpu ? (median(bCpu) / median(cpu)).toFixed(2) : "-"}`
      : "";
    console.log(
      `${name.padEnd(9)} ${String(concurrency).padStart(11)} ${fmt(r.rate).padStart(12)} ${
        r.p50.toFixed(2).padStart(8)
      } ${r.p99.toFixed(2).padStart(8)}   ${ratio.padStart(7)} ${cpuCells}   (${
        n.toLocaleString("en")
      } messages)`,
    );
  }
}
if (rates.size) {
  // Per-round ratios to the baseline (same round, so the same machine load), with the
  // baseline's own figures: a slow baseline means a loaded machine, and flatters every ratio.
  console.log(
    "\nper round: rate / baseline rate; baseline CPU / this CPU (baseline's own msg/s first)",
  );
  for (const concurrency of [1, 100]) {
    for (const base of ["bare", "nats-raw", "denokv-raw"]) {
      const b = rates.get(`${base}@${concurrency}`);
      if (!b) continue;
      const bCpu = cpus.get(`${base}@${concurrency}`) ?? [];
      console.log(`${base}@${concurrency}: ${b.map(fmt).join(" ")} msg/s`);
      // its own figure against its quiet one (CPU per message where measured, else the rate)
      const quietKey = `events/${base}@${concurrency}`;
      console.log(
        `  ${
          checkBaseline(quietKey, QUIET[quietKey]?.unit === "msg/s" ? median(b) : median(bCpu)).text
        }`,
      );
      for (const [name] of systems) {
        if (name === base || baselineOf(name) !== base) continue;
        const key = `${name}@${concurrency}`;
        const rs = rates.get(key)!;
        const cs = cpus.get(key);
        console.log(
          `  ${key.padEnd(16)} rate ${rs.map((x, i) => (x / b[i]).toFixed(2)).join(" ")}${
            cs && bCpu.length ? `; CPU ${cs.map((x, i) => (bCpu[i] / x).toFixed(2)).join(" ")}` : ""
          }`,
        );
      }
    }
  }
}

/** Goal verdicts, each with the check of its baseline: printed at the end. */
const verdicts: Array<[BaselineCheck, string, string]> = [];
/** Median of the per-round ratios `xs[i] / ys[i]`. */
const medianRatio = (xs: number[], ys: number[]) => median(xs.map((x, i) => x / ys[i]));
/**
 * The verdict of one goal `row / base >= bound` (rate, medians of per-round ratios; the CPU
 * ratio beside it), with the baseline's own figure checked against its quiet one.
 */
function goal(
  row: string,
  base: string,
  concurrency: number,
  bound: number,
  rowRates: Map<string, number[]>,
  baseFigure: (key: string) => number | undefined,
  rowCpu?: Map<string, number[]>,
): void {
  const r = rowRates.get(`${row}@${concurrency}`);
  const b = rowRates.get(`${base}@${concurrency}`);
  const figure = baseFigure(`${base}@${concurrency}`);
  if (!r || !b || figure === undefined) return;
  const check = checkBaseline(`events/${base}@${concurrency}`, figure);
  const ratio = medianRatio(r, b);
  const rc = rowCpu?.get(`${row}@${concurrency}`), bc = rowCpu?.get(`${base}@${concurrency}`);
  const cpu = rc && bc ? `, CPU ${medianRatio(bc, rc).toFixed(2)}` : "";
  verdicts.push([
    check,
    `${row} / ${base} at concurrency ${concurrency}`,
    `rate ${ratio.toFixed(2)}${cpu} (goal >= ${bound}): ${ratio >= bound ? "met" : "NOT met"}; ` +
    `per round ${r.map((x, i) => (x / b[i]).toFixed(2)).join(" ")}; ${check.text}`,
  ]);
}
const cpuMedian = (key: string) => cpus.has(key) ? median(cpus.get(key)!) : undefined;
for (const c of [1, 100]) {
  goal("memory", "bare", c, 0.75, rates, cpuMedian, cpus);
  goal("nats", "nats-raw", c, 0.85, rates, cpuMedian, cpus);
}

await natsCluster?.close();
if (rates.has("nats-r1@1") && rates.has("nats-r3@1")) {
  console.log(
    "\nNATS JetStream: a private 3-node cluster with 3 replicas (nats-r3) beside a private single server (nats-r1)",
  );
  console.log("| concurrency | nats-r1 msg/s | nats-r3 msg/s | r3/r1 | per round |");
  console.log("| ---: | ---: | ---: | ---: | --- |");
  for (const concurrency of [1, 100]) {
    const one = rates.get(`nats-r1@${concurrency}`)!;
    const r3 = rates.get(`nats-r3@${concurrency}`)!;
    console.log(
      `| ${concurrency} | ${fmt(median(one))} | ${fmt(median(r3))} | ${
        (median(r3) / median(one)).toFixed(2)
      } | ${r3.map((x, i) => (x / one[i]).toFixed(2)).join(" ")} |`,
    );
  }
}

if (rates.has("memory-traced@1") && rates.has("memory@1")) {
  console.log(
    "\ntracing cost on the memory broker (a PRODUCER and a CONSUMER span per message; always-on sampler, batching exporter; bound 30%)",
  );
  const floor = rates.has("memory+sdk@1");
  console.log(
    "| concurrency | memory msg/s | memory traced msg/s | traced/memory | per round |" +
      (floor ? " memory+sdk msg/s | sdk floor: (memory+sdk)/memory | traced/(memory+sdk) |" : ""),
  );
  console.log("| ---: | ---: | ---: | ---: | --- |" + (floor ? " ---: | ---: | ---: |" : ""));
  for (const concurrency of [1, 100]) {
    const plain = rates.get(`memory@${concurrency}`)!;
    const traced = rates.get(`memory-traced@${concurrency}`)!;
    const perRound = traced.map((t, i) => (t / plain[i]).toFixed(2)).join(" ");
    const sdk = rates.get(`memory+sdk@${concurrency}`);
    const floorCells = sdk
      ? ` ${fmt(median(sdk))} | ${(median(sdk) / median(plain)).toFixed(2)} | ${
        (median(traced) / median(sdk)).toFixed(2)
      } |`
      : "";
    console.log(
      `| ${concurrency} | ${fmt(median(plain))} | ${fmt(median(traced))} | ${
        (median(traced) / median(plain)).toFixed(2)
      } | ${perRound} |${floorCells}`,
    );
  }
  if (floor) {
    console.log(
      "memory+sdk: the handler makes the same two spans straight through the SDK (no fw tracing code): " +
        "the most any instrumentation on this SDK can keep of the untraced rate",
    );
  }
}

const redisSystems = [
  "redis",
  "fw-redis",
  "fw-node",
  "fw-node-p3",
  "fw-cluster",
  "fw-cluster-p3",
  "bullmq",
  "raw-redis",
  "raw-envelope",
];
if (!only || redisSystems.some((s) => only.has(s))) {
  const { runRedisBench } = await import("./_bench_redis.ts");
  const redisRates = await runRedisBench({
    url: String(args["redis-url"] ?? "redis://127.0.0.1:6379"),
    // 100,000: a run of 20,000 lasted 80 ms on a quiet machine, and fw's fixed cost per run (a
    // new transport, its reader's first reads) weighed in it: fw-redis / raw-redis at concurrency
    // 50 measured 0.75, 0.76 and 0.75 in three runs of 20,000 jobs and 0.94 in one of 100,000,
    // in the same hour (2026-11-29). The goal is about the steady state.
    messages: Number(args["redis-messages"] ?? 100_000),
    rounds: Number(args["redis-rounds"] ?? ROUNDS),
    window: WINDOW,
    concurrencies: [1, 50],
    only,
  });
  for (const c of [1, 50]) {
    goal("fw-redis", "raw-redis", c, 0.8, redisRates, (k) => {
      const rs = redisRates.get(k);
      return rs ? median(rs) : undefined;
    });
  }
}

if (!only || only.has("sql")) {
  const { benchSql } = await import("./_bench_sql.ts");
  const sqlRates = await benchSql({
    messages: args["sql-messages"] ? Number(args["sql-messages"]) : undefined,
    rounds: args["sql-rounds"] ? Number(args["sql-rounds"]) : undefined,
    bossNotify: "boss-notify" in args,
    ...(args["only-sql"] ? { systems: new Set(String(args["only-sql"]).split(",")) } : {}),
  });
  for (const c of [1, 50]) {
    goal("fw sql", "raw-sql", c, 0.7, sqlRates, (k) => {
      const rs = sqlRates.get(k);
      return rs ? median(rs) : undefined;
    });
  }
}

if (!only || only.has("delayed")) {
  const { benchDelayed } = await import("./_bench_delayed.ts");
  await benchDelayed({
    redisUrl: String(args["redis-url"] ?? "redis://127.0.0.1:6379"),
    sqlUrl: Deno.env.get("FW_TEST_POSTGRES_URL") ?? "postgres://root@127.0.0.1:5432/test",
    burst: Number(args["delayed-burst"] ?? 100_000),
    burstLeadMs: Number(args["delayed-lead"] ?? 5_000),
    spread: Number(args["delayed-spread"] ?? 10_000),
    rounds: Number(args["delayed-rounds"] ?? 2),
    ...(args["delayed-part"] === "burst" || args["delayed-part"] === "spread"
      ? { part: args["delayed-part"] as "burst" | "spread" }
      : {}),
    ...(args["delayed-systems"]
      ? { systems: new Set(String(args["delayed-systems"]).split(",")) }
      : {}),
  });
}

if (verdicts.length) {
  console.log(
    `\nVerdicts (each needs its baseline within 1.5x of its quiet figure in scripts/_quiet.ts; ` +
      `load average ${loadBefore} before, ${await loadAverage()} after):`,
  );
  for (const [check, what, text] of verdicts) console.log(`  ${what}: ${verdict([check], text)}`);
}
