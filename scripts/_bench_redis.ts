/**
 * The Redis part of `deno task bench:events`: fw's Redis Streams transport (`kvStreamTransport`)
 * beside BullMQ (npm `bullmq`, under Deno) and a bare Redis Streams loop, in the same run, on the
 * same Redis (127.0.0.1:6379 unless `--redis-url`), doing the same work: `--redis-messages`
 * (100,000) small jobs, validated with the same compiled validator when published and when handled,
 * at handler concurrency 1 and 50.
 *
 * - `fw-redis`: `getPublisher()` -> `EventBus` -> `kvStreamTransport` -> consumer (validation,
 *   context, time-out, metrics);
 * - `bullmq`: `queue.add()` (after validating) -> `Worker` with the same concurrency (validating
 *   again), `removeOnComplete: true` so it keeps no job history either;
 * - `fw-node`, `fw-node-p3`: `fw-redis` on a private single redis-server the bench starts (free
 *   port, no persistence: the shared Redis serves other work too), with one stream per topic and
 *   with three (`partitions: 3`);
 * - `fw-cluster`, `fw-cluster-p3`: the same on a Redis Cluster of three masters that the bench
 *   starts on this machine (free ports, no replicas, no persistence), with one and three
 *   partitions, each with its per-round ratio to `fw-node`: what a cluster costs per message when
 *   its shards share one machine (on real machines each shard adds its own CPU; see the "Scaling
 *   out" guide);
 * - `raw-redis`: what Redis itself allows with this access pattern and client: `XADD` per
 *   message, `XREADGROUP COUNT 128 BLOCK` and one `XACK` per batch over node-redis, validation
 *   on both sides and nothing else (no envelope, no consumer; it handles a reply's jobs one after
 *   the other, synchronously, which is what any concurrency amounts to for a handler that does
 *   no I/O, so it runs the same loop at both concurrencies);
 * - `raw-envelope`: the same loop carrying what fw must carry per message, its envelope (a
 *   message id, the topic, the attributes, a trace id and the publish time around the payload,
 *   as JSON), checked on arrival as fw's consumer checks it: how much of the distance from
 *   `fw-redis` to `raw-redis` is the envelope itself.
 *
 * Publishers keep at most `--window` (1,000) jobs published but not handled and 256 publishes in
 * flight. Throughput is jobs / (first publish -> last handled); latency is publish call -> handler
 * entry (p50, p99). Each system first runs 5,000 jobs uncounted (a warm-up: the first run of a
 * process compiles the client and the validator for all), then rounds alternate the order of the
 * systems; the table shows medians and each round's fw/BullMQ throughput ratio. Every run uses
 * fresh keys, deleted afterwards.
 *
 * @module
 */

import { compile, createLogger, Int, MinLength, Uuid } from "@fw/runtime";
import {
  envelopeProblem,
  EventBus,
  getPublisher,
  handler,
  newMessageId,
  newTraceId,
  topic,
} from "@fw/events";
import { kvStreamTransport } from "@fw/events/kvstore";
// The one module that creates node-redis clients (the raw baseline uses the same client as fw).
import { openRedis } from "../events/_redis.ts";
import { RedisCluster } from "../events/transports/redis_streams/testdata/redis_cluster.ts";
import { median } from "./_stats.ts";

const Payload = { id: Uuid, customer: MinLength(1), items: Int, total: Int };
const Job = topic("bench.redis.job", Payload);
const ID = "6f1c2a5e-8a3b-4f1e-9d2c-1b2a3c4d5e6f";
const validate = compile(Payload, "payload");

/** Options of {@linkcode runRedisBench}. */
export interface RedisBenchOptions {
  url: string;
  messages: number;
  rounds: number;
  window: number;
  concurrencies: readonly number[];
  only?: ReadonlySet<string>;
  /** Node URLs of the Redis Cluster the `fw-cluster` rows run on (started by the bench). */
  clusterUrls?: string[];
  /** URL of the private single Redis the `fw-node` rows run on (started by the bench). */
  nodeUrl?: string;
}

interface Result {
  rate: number;
  p50: number;
  p99: number;
}

type Run = (n: number, concurrency: number, options: RedisBenchOptions) => Promise<Result>;

function summarize(n: number, elapsedMs: number, latencies: Float64Array): Result {
  latencies.sort();
  const at = (p: number) => latencies[Math.min(n - 1, Math.floor(n * p))];
  return { rate: n / (elapsedMs / 1000), p50: at(0.5), p99: at(0.99) };
}

/** Publishes n jobs with at most `window` unhandled and 256 in flight. */
class Pacer {
  handled = 0;
  readonly latencies: Float64Array;
  readonly sent: Float64Array;
  readonly finished: Promise<void>;
  #done!: () => void;
  #wake: (() => void) | undefined;
  #waitFor = 0;
  constructor(readonly n: number, readonly window: number) {
    this.latencies = new Float64Array(n);
    this.sent = new Float64Array(n);
    this.finished = new Promise((r) => this.#done = r);
  }
  /** From the handler, on entry. */
  handle(i: number): void {
    this.latencies[i] = performance.now() - this.sent[i];
    this.handled++;
    if (this.handled === this.n) this.#done();
    if (this.#wake && this.handled >= this.#waitFor) {
      const wake = this.#wake;
      this.#wake = undefined;
      wake();
    }
  }
  async publishAll(publish: (i: number) => Promise<unknown>): Promise<Result> {
    const start = performance.now();
    const inflight: Promise<unknown>[] = [];
    for (let i = 0; i < this.n; i++) {
      this.sent[i] = performance.now();
      inflight.push(publish(i));
      if (inflight.length >= 256) {
        await Promise.all(inflight);
        inflight.length = 0;
      }
      if (i - this.handled >= this.window) {
        this.#waitFor = i - (this.window >> 1);
        await new Promise<void>((r) => this.#wake = r);
      }
    }
    await Promise.all(inflight);
    await this.finished;
    return summarize(this.n, performance.now() - start, this.latencies);
  }
}

const payloadOf = (i: number) => ({ id: ID, customer: "c", items: i, total: 5 });

/** Deletes the keys matching `pattern` (each run uses fresh keys). */
export async function dropKeys(url: string, pattern: string): Promise<void> {
  const redis = await openRedis("bench", { url });
  const client = redis.main;
  try {
    let cursor = "0";
    do {
      const [next, found] = await client.sendCommand([
        "SCAN",
        cursor,
        "MATCH",
        pattern,
        "COUNT",
        "1000",
      ]) as [string, string[]]; // deno-fmt-ignore
      cursor = next;
      if (found.length) await client.sendCommand(["UNLINK", ...found]);
    } while (cursor !== "0");
  } finally {
    await redis.close();
  }
}

const fresh = () => `fwbench:${crypto.randomUUID().slice(0, 8)}`;

/** fw over Redis: `where` picks the single Redis or the cluster, `partitions` the streams per topic. */
const fwOn =
  (where: "shared" | "node" | "cluster", partitions: number): Run => async (n, concurrency, o) => {
    const prefix = `${fresh()}:`;
    const pacer = new Pacer(n, o.window);
    const url = where === "cluster" ? o.clusterUrls! : where === "node" ? o.nodeUrl! : o.url;
    const transport = kvStreamTransport({ url, keyPrefix: prefix, partitions });
    const bus = new EventBus({
      transports: { redis: transport },
      logger: createLogger({ level: "warn" }),
    });
    await bus.add(
      handler(Job).options({ group: "bench", concurrency }).handle(async (msg) => {
        pacer.handle(msg.payload.items);
        await Promise.resolve();
      }),
    );
    await bus.start();
    const publish = getPublisher(Job, { bus });
    try {
      return await pacer.publishAll((i) => publish(payloadOf(i)));
    } finally {
      await bus.stop();
      // The private servers are thrown away after the run; the shared Redis is cleaned.
      if (where === "shared") await dropKeys(o.url, `${prefix}*`);
    }
  };

/** BullMQ's connection options for a Redis URL. */
export function bullConnection(
  url: string,
): { host: string; port: number; maxRetriesPerRequest: null } {
  const u = new URL(url);
  return { host: u.hostname, port: Number(u.port || 6379), maxRetriesPerRequest: null };
}

const runBull: Run = async (n, concurrency, o) => {
  const { Queue, Worker } = await import("bullmq");
  const connection = bullConnection(o.url);
  const prefix = fresh();
  const pacer = new Pacer(n, o.window);
  const queue = new Queue("bench", { connection, prefix });
  const worker = new Worker("bench", async (job) => {
    if (!validate(job.data).ok) throw new Error("invalid job");
    pacer.handle((job.data as { items: number }).items);
    await Promise.resolve();
  }, { connection, prefix, concurrency });
  await worker.waitUntilReady();
  try {
    return await pacer.publishAll((i) => {
      const data = payloadOf(i);
      if (!validate(data).ok) throw new Error("invalid job");
      return queue.add("job", data, { removeOnComplete: true });
    });
  } finally {
    await worker.close();
    await queue.close();
    await dropKeys(o.url, `${prefix}:*`);
  }
};

/** The bare loop; with `envelope`, each job travels in an envelope like fw's. */
const rawLoop = (envelope: boolean): Run => async (n, _concurrency, o) => {
  const redis = await openRedis("bench", { url: o.url });
  const main = redis.main;
  const reader = await redis.dedicated();
  const stream = fresh();
  await main.sendCommand(["XGROUP", "CREATE", stream, "g", "$", "MKSTREAM"]);
  const pacer = new Pacer(n, o.window);
  let stop = false;
  const loop = (async () => {
    while (!stop) {
      const reply = await reader.sendCommand([
        "XREADGROUP",
        "GROUP",
        "g",
        "c",
        "COUNT",
        "128",
        "BLOCK",
        "200",
        "STREAMS",
        stream,
        ">",
      ]) as [string, [string, string[]][]][] | null; // deno-fmt-ignore
      if (!reply) continue;
      const ids: string[] = [];
      for (const [id, fields] of reply[0][1]) {
        let data = JSON.parse(fields[1]);
        if (envelope) {
          if (envelopeProblem(data) !== undefined || data.topic !== Job.name) {
            throw new Error("invalid envelope");
          }
          data = data.payload;
        }
        if (!validate(data).ok) throw new Error("invalid job");
        pacer.handle(data.items);
        ids.push(id);
      }
      void main.sendCommand(["XACK", stream, "g", ...ids]);
    }
  })();
  try {
    return await pacer.publishAll((i) => {
      const data = payloadOf(i);
      if (!validate(data).ok) throw new Error("invalid job");
      const body = envelope
        ? {
          id: newMessageId(),
          topic: Job.name,
          payload: data,
          attributes: {},
          traceId: newTraceId(),
          publishedAt: Date.now(),
        }
        : data;
      return main.sendCommand(["XADD", stream, "*", "e", JSON.stringify(body)]);
    });
  } finally {
    stop = true;
    await loop;
    await main.sendCommand(["UNLINK", stream]);
    await redis.close();
  }
};

/** Jobs of the uncounted warm-up run of each system. */
const WARM_UP = 5_000;

const fmt = (x: number) => Math.round(x).toLocaleString("en");

/**
 * Runs the rounds and prints the table (progress to stderr, table to stdout).
 *
 * @param o Sizes, rounds and systems.
 * @returns Each row's rate per round, by `<system>@<concurrency>` (for bench:events' verdicts).
 */
export async function runRedisBench(o: RedisBenchOptions): Promise<Map<string, number[]>> {
  try {
    await (await openRedis("bench", { url: o.url })).close();
  } catch (err) {
    console.error(`redis skipped: ${err instanceof Error ? err.message : err}`);
    return new Map();
  }
  const systems: [string, Run][] = [
    ["fw-redis", fwOn("shared", 1)],
    ["fw-node", fwOn("node", 1)],
    ["fw-node-p3", fwOn("node", 3)],
    ["fw-cluster", fwOn("cluster", 1)],
    ["fw-cluster-p3", fwOn("cluster", 3)],
    ["bullmq", runBull],
    ["raw-redis", rawLoop(false)],
    ["raw-envelope", rawLoop(true)],
  ];
  const chosen = systems.filter(([name]) => !o.only || o.only.has(name) || o.only.has("redis"));
  let cluster: RedisCluster | undefined;
  let node: Deno.ChildProcess | undefined;
  try {
    if (chosen.some(([name]) => name.startsWith("fw-cluster") || name.startsWith("fw-node"))) {
      // Private servers on this machine, started for the run on free ports: three cluster
      // masters (no replicas), and one single Redis with the same settings as their baseline.
      cluster = await RedisCluster.start({ masters: 3 });
      const started = await startNode();
      node = started.child;
      o = { ...o, clusterUrls: cluster.urls, nodeUrl: started.url };
    }
    return await rounds(o, chosen);
  } finally {
    await cluster?.destroy();
    if (node) {
      node.kill("SIGKILL");
      await node.status;
    }
  }
}

/** A private single redis-server (no persistence), like a node of the bench's cluster. */
async function startNode(): Promise<{ child: Deno.ChildProcess; url: string }> {
  const listener = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  const port = (listener.addr as Deno.NetAddr).port;
  listener.close();
  const dir = await Deno.makeTempDir({ prefix: "fw-bench-redis-" });
  const child = new Deno.Command("redis-server", {
    args: [
      "--port",
      String(port),
      "--bind",
      "127.0.0.1",
      "--dir",
      dir,
      "--save",
      "",
      "--appendonly",
      "no",
    ],
    stdin: "null",
    stdout: "null",
    stderr: "null",
  }).spawn();
  const url = `redis://127.0.0.1:${port}`;
  for (let i = 0;; i++) {
    try {
      await (await openRedis("bench", { url })).close();
      return { child, url };
    } catch (err) {
      if (i === 100) throw err;
      await new Promise((r) => setTimeout(r, 50));
    }
  }
}

async function rounds(
  o: RedisBenchOptions,
  chosen: [string, Run][],
): Promise<Map<string, number[]>> {
  const results = new Map<string, Result[]>();
  const ratios = new Map<number, string[]>();
  /** Per round: a private-server row's rate over fw-node (private single Redis, one stream). */
  const vsSingle = new Map<string, string[]>();
  // A warm-up run of each system, not counted: without it the first system of round 1 compiles
  // what they all share (the node-redis client, the validator, the pacer) and its round is slow
  // for that alone (measured: fw-redis, first at concurrency 1 in round 1, at 0.37-0.57 of
  // raw-redis there, against 0.66-1.03 in the other rounds).
  for (const [name, run] of chosen) {
    await run(Math.min(o.messages, WARM_UP), o.concurrencies[0] ?? 1, o);
    console.error(`warm-up ${name}`);
  }
  for (let round = 1; round <= o.rounds; round++) {
    for (const c of o.concurrencies) {
      const order = round % 2 ? chosen : [...chosen].reverse();
      const rates = new Map<string, number>();
      for (const [name, run] of order) {
        const r = await run(o.messages, c, o);
        const key = `${name}@${c}`;
        results.set(key, [...(results.get(key) ?? []), r]);
        rates.set(name, r.rate);
        console.error(
          `round ${round} ${key.padEnd(14)} ${fmt(r.rate)} jobs/s  p50 ${
            r.p50.toFixed(1)
          } ms  p99 ${r.p99.toFixed(1)} ms`,
        );
      }
      const fw = rates.get("fw-redis"), bull = rates.get("bullmq");
      if (fw && bull) ratios.set(c, [...(ratios.get(c) ?? []), (fw / bull).toFixed(2)]);
      const base = rates.get("fw-node");
      for (const [name] of chosen) {
        const rate = rates.get(name);
        if (!base || !rate || !(name.startsWith("fw-node-") || name.startsWith("fw-cluster"))) {
          continue;
        }
        const key = `${name}@${c}`;
        vsSingle.set(key, [...(vsSingle.get(key) ?? []), (rate / base).toFixed(2)]);
      }
    }
  }
  console.log(
    `\nRedis (${o.messages.toLocaleString("en")} jobs, ${o.rounds} rounds, medians)` +
      "\nsystem         concurrency     jobs/s   p50 ms   p99 ms   per round: fw-redis/BullMQ, fw-node-p3 and fw-cluster*/fw-node",
  );
  for (const c of o.concurrencies) {
    for (const [name] of chosen) {
      const rs = results.get(`${name}@${c}`) ?? [];
      if (rs.length === 0) continue;
      const line = `${name.padEnd(14)} ${String(c).padStart(11)} ${
        fmt(median(rs.map((r) => r.rate))).padStart(10)
      } ${median(rs.map((r) => r.p50)).toFixed(1).padStart(8)} ${
        median(rs.map((r) => r.p99)).toFixed(1).padStart(8)
      }`;
      const perRound = name === "fw-redis" ? ratios.get(c) : vsSingle.get(`${name}@${c}`);
      console.log(perRound ? `${line}   ${perRound.join(" ")}` : line);
    }
  }
  return new Map([...results].map(([k, rs]) => [k, rs.map((r) => r.rate)]));
}
