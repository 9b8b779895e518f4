/**
 * The systems of the delayed-delivery benchmark (`_bench_delayed.ts`): fw on each transport, and
 * the peers, BullMQ delayed jobs (`delay`) and pg-boss `startAfter`, each set up the way its
 * documentation gives for throughput. The peers are fed through their bulk calls (the publishes of
 * one event-loop turn, up to 1,000 per call), as a user enqueueing many jobs would; fw's Redis
 * transport coalesces a turn's publishes by itself, its PostgreSQL transport writes one row set per
 * publish. Publishing speed only sets the lead; the figures are taken after the due time. Every system validates the payload at publish and in the
 * handler, runs its handler at the given concurrency and uses fresh keys, schemas or streams,
 * removed at the end.
 *
 * @module
 */

import { compile, createLogger, Int, MinLength, Uuid } from "@fw/runtime";
import { EventBus, getPublisher, handler, MemoryBroker, topic, type Transport } from "@fw/events";
import { kvStreamTransport } from "@fw/events/kvstore";
import { sqlTransport } from "@fw/events/sql";
import { PgBoss } from "pg-boss";
import { bullConnection, dropKeys } from "./_bench_redis.ts";
import { dropSchema } from "./_bench_sql.ts";
import { natsBenchTransport } from "./_bench_nats.ts";

const Payload = { id: Uuid, customer: MinLength(1), items: Int, total: Int };
const Job = topic("bench.delayed.job", Payload);
const ID = "6f1c2a5e-8a3b-4f1e-9d2c-1b2a3c4d5e6f";
const validate = compile(Payload, "payload");

/** A payload whose `items` is the message number. */
export const payloadOf = (
  i: number,
): { id: string; customer: string; items: number; total: number } => ({
  id: ID,
  customer: "c",
  items: i,
  total: 5,
});

/** A started system. */
export interface Running {
  /** Publishes message `i`, due at `at` (ms since the epoch). */
  publish(i: number, at: number): Promise<unknown>;
  /** Stops it and removes what it stored. */
  close(): Promise<void>;
}

/** Starts a system whose handler calls `seen(i)` for message `i`. */
export type DelayedSystem = (seen: (i: number) => void, concurrency: number) => Promise<Running>;

/** Where the engines are. */
export interface Engines {
  readonly redisUrl: string;
  readonly sqlUrl: string;
}

async function fw(
  transport: Transport,
  seen: (i: number) => void,
  concurrency: number,
  cleanup: () => Promise<void> = () => Promise.resolve(),
): Promise<Running> {
  const bus = new EventBus({
    transports: { main: transport },
    logger: createLogger({ level: "warn" }),
  });
  await bus.add(
    handler(Job).options({ group: "bench", concurrency }).handle(async (m) => {
      seen(m.payload.items);
      await Promise.resolve();
    }),
  );
  await bus.start();
  const publish = getPublisher(Job, { bus });
  return {
    publish: (i, at) => publish(payloadOf(i), { deliverAt: at }),
    close: async () => {
      await bus.stop();
      await cleanup();
    },
  };
}

const fresh = () => crypto.randomUUID().slice(0, 8);

/**
 * Coalesces the calls of one turn of the event loop into bulk calls of at most 1,000 items (how
 * a peer is fed many jobs: BullMQ `addBulk`, pg-boss `insert`); each call resolves with its batch.
 */
function batcher<T>(flush: (items: T[]) => Promise<unknown>): (item: T) => Promise<void> {
  let items: T[] | undefined;
  let done: Promise<void> | undefined;
  return (item) => {
    if (!items) {
      const batch: T[] = items = [];
      done = Promise.resolve().then(async () => {
        items = undefined;
        for (let i = 0; i < batch.length; i += 1000) await flush(batch.slice(i, i + 1000));
      });
    }
    items.push(item);
    return done!;
  };
}

/**
 * The fw systems by name (`memory`, `redis`, `sql`, `nats`, `denokv`); NATS only when a server
 * answers.
 *
 * @param e Engines.
 * @returns The systems.
 */
export async function fwSystems(e: Engines): Promise<Map<string, DelayedSystem>> {
  const systems = new Map<string, DelayedSystem>();
  systems.set("memory", (seen, c) => fw(new MemoryBroker(), seen, c));
  systems.set("redis", (seen, c) => {
    const prefix = `fwbench:${fresh()}:`;
    const t = kvStreamTransport({ url: e.redisUrl, keyPrefix: prefix });
    return fw(t, seen, c, () => dropKeys(e.redisUrl, `${prefix}*`));
  });
  systems.set("sql", async (seen, c) => {
    const schema = `bench_delay_${fresh()}`;
    const t = sqlTransport({ url: e.sqlUrl, schema, poolSize: 10 });
    await t.migrate();
    return fw(t, seen, c, () => dropSchema(e.sqlUrl, schema));
  });
  const nats = await natsBenchTransport();
  if (nats) systems.set("nats", async (seen, c) => fw(await nats(), seen, c));
  systems.set("denokv", async (seen, c) => {
    const { denoKvTransport } = await import("@fw/events/denokv");
    const path = await Deno.makeTempFile({ suffix: ".kv" });
    return fw(denoKvTransport({ path }), seen, c, () => Deno.remove(path).catch(() => {}));
  });
  return systems;
}

/**
 * Deno KV itself: `kv.enqueue(message, { delay })` and `kv.listenQueue()` on a temporary file,
 * validating on both sides and nothing else (the engine's own lateness, beside fw's `denokv`).
 */
export async function rawDenoKv(seen: (i: number) => void): Promise<Running> {
  const path = await Deno.makeTempFile({ suffix: ".kv" });
  const kv = await Deno.openKv(path);
  kv.listenQueue((data: ReturnType<typeof payloadOf>) => {
    if (!validate(data).ok) throw new Error("invalid payload");
    seen(data.items);
  });
  return {
    publish: (i, at) => {
      const data = payloadOf(i);
      if (!validate(data).ok) throw new Error("invalid payload");
      return kv.enqueue(data, { delay: Math.max(0, at - Date.now()) });
    },
    close: async () => {
      kv.close();
      await Deno.remove(path).catch(() => {});
    },
  };
}

/** BullMQ delayed jobs (`queue.addBulk` of `{ name, data, opts: { delay } }`) and a `Worker`. */
export function bullmq(e: Engines): DelayedSystem {
  return async (seen, concurrency) => {
    const { Queue, Worker } = await import("bullmq");
    const connection = bullConnection(e.redisUrl);
    const prefix = `bullbench${fresh()}`;
    const queue = new Queue("delayed", { connection, prefix });
    const worker = new Worker("delayed", async (job) => {
      if (!validate(job.data).ok) throw new Error("invalid job");
      seen((job.data as { items: number }).items);
      await Promise.resolve();
    }, { connection, prefix, concurrency });
    await worker.waitUntilReady();
    const add = batcher((jobs: Parameters<typeof queue.addBulk>[0]) => queue.addBulk(jobs));
    return {
      publish: (i, at) => {
        const data = payloadOf(i);
        if (!validate(data).ok) throw new Error("invalid job");
        const opts = { delay: Math.max(0, at - Date.now()), removeOnComplete: true };
        return add({ name: "job", data, opts });
      },
      close: async () => {
        await worker.close();
        await queue.close();
        await dropKeys(e.redisUrl, `${prefix}:*`);
      },
    };
  };
}

/** pg-boss `insert(queue, [{ data, startAfter }])` and `work()` with its throughput settings. */
export function pgBoss(e: Engines): DelayedSystem {
  return async (seen, concurrency) => {
    const schema = `bench_boss_${fresh()}`;
    const boss = new PgBoss({ connectionString: e.sqlUrl, schema, max: 10 });
    boss.on("error", () => {});
    await boss.start();
    const queue = "delayed-job";
    await boss.createQueue(queue);
    await boss.work<{ items: number }>(queue, {
      localConcurrency: concurrency,
      batchSize: 20,
      burstWhenBatchFull: true,
      pollingIntervalSeconds: 0.5,
    }, async (jobs) => {
      for (const job of jobs) {
        if (!validate(job.data).ok) throw new Error("invalid payload");
        seen(job.data.items);
      }
      await Promise.resolve();
    });
    const insert = batcher((jobs: { data: object; startAfter: Date }[]) =>
      boss.insert(queue, jobs)
    );
    return {
      publish: (i, at) => {
        const data = payloadOf(i);
        if (!validate(data).ok) return Promise.reject(new Error("invalid payload"));
        return insert({ data, startAfter: new Date(at) });
      },
      close: async () => {
        await boss.stop({ graceful: false, timeout: 1000 });
        await dropSchema(e.sqlUrl, schema);
      },
    };
  };
}
