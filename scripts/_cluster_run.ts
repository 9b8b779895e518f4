/**
 * One run of the cluster scenario (`deno task cluster`, and a short one in
 * `tests/cluster_test.ts`): a private Redis, a random schema on the shared PostgreSQL, N instances
 * of `examples/cluster` behind HAProxy, load from this process, then a rolling restart, a SIGKILL
 * and a Redis restart while the load runs; then the checks of `_cluster_check.ts`.
 *
 * @module
 */

import { kvStream } from "@fw/events/kvstore";
import { migrate, openDb } from "../examples/cluster/db.ts";
import { LiveOrders } from "../examples/cluster/topics.ts";
import { RedisServer } from "../events/transports/redis_streams/testdata/redis_server.ts";
import { dataRows, liveRows, type Row, table } from "./_cluster_check.ts";
import { ensureHaproxy, Haproxy } from "./_cluster_haproxy.ts";
import { freePort, Instance, pause } from "./_cluster_instances.ts";
import { Load } from "./_cluster_load.ts";

/** Options of {@linkcode runCluster}. */
export interface ClusterOptions {
  /** How long the load runs, in ms. */
  durationMs: number;
  /** Number of instances. */
  instances: number;
  /** Number of `eventClient` (WebSocket) subscribers. */
  subscribers: number;
  /** Number of `EventSource` (SSE) subscribers. */
  sseSubscribers: number;
  /** Order writes per second (and as many reads). */
  rate: number;
  /** Roll a restart through every instance. */
  roll: boolean;
  /** SIGKILL one instance and start it again. */
  kill: boolean;
  /** Restart the private Redis once. */
  redisRestart: boolean;
  /** The instances' `health.drainDelayMs`. */
  drainMs: number;
  /** PostgreSQL URL (a random schema is created and dropped). */
  databaseUrl: string;
  /** Progress lines. */
  log: (line: string) => void;
}

/** The outcome: the table's rows, its text and the verdict. */
export interface ClusterReport {
  rows: Row[];
  text: string;
  ok: boolean;
}

async function streamIds(port: number, key: string): Promise<string[]> {
  const out = await new Deno.Command("redis-cli", {
    args: ["-p", String(port), "--no-raw", "XRANGE", key, "-", "+"],
    stdout: "piped",
  }).output();
  const text = new TextDecoder().decode(out.stdout);
  return [...text.matchAll(/^\s*\d+\) 1\) "(\d+-\d+)"$/gm)].map((m) => m[1]);
}

async function until(what: string, check: () => Promise<boolean> | boolean, ms: number) {
  const end = Date.now() + ms;
  while (!(await check())) {
    if (Date.now() > end) throw new Error(`Timed out waiting for ${what}`);
    await pause(250);
  }
}

/** Logs every change of HAProxy's view of the servers (checked every 250 ms) until stopped. */
function watch(haproxy: Haproxy, say: (line: string) => void): { stop(): void } {
  let running = true;
  let last = "";
  (async () => {
    while (running) {
      const now = await haproxy.servers().catch(() => undefined);
      const text = now ? Object.entries(now).map(([k, v]) => `${k} ${v}`).join(", ") : "";
      if (now && text !== last) say(`HAProxy: ${last = text}`);
      await pause(250);
    }
  })();
  return { stop: () => void (running = false) };
}

/**
 * Runs the scenario and checks it.
 *
 * @param o The options.
 * @returns The report.
 */
export async function runCluster(o: ClusterOptions): Promise<ClusterReport> {
  await ensureHaproxy();
  const dir = await Deno.makeTempDir({ prefix: "fw-cluster-" });
  const schema = `fw_cluster_${crypto.randomUUID().slice(0, 8)}`;
  const began = Date.now();
  const say = (line: string) => o.log(`[${((Date.now() - began) / 1000).toFixed(1)}s] ${line}`);
  const redis = await RedisServer.start();
  const db = openDb(o.databaseUrl, schema, 3);
  const instances: Instance[] = [];
  let haproxy: Haproxy | undefined;
  let load: Load | undefined;
  const witness = kvStream({ url: redis.url, keyPrefix: `${schema}:live:` });
  let keep = true;
  try {
    await migrate(db, schema);
    const env = {
      CLUSTER_DATABASE_URL: o.databaseUrl,
      CLUSTER_SCHEMA: schema,
      CLUSTER_REDIS_URL: redis.url,
      CLUSTER_DRAIN_MS: String(o.drainMs),
    };
    for (let i = 1; i <= o.instances; i++) {
      instances.push(new Instance(`i${i}`, freePort(), env, `${dir}/i${i}.log`));
    }
    await Promise.all(instances.map((i) => i.start()));
    const port = freePort();
    haproxy = await Haproxy.start(dir, { port, servers: instances });
    const base = `http://127.0.0.1:${port}`;
    await until("HAProxy to see the instances", async () => {
      const res = await fetch(`${base}/readyz`).catch(() => undefined);
      await res?.body?.cancel();
      return res?.status === 200;
    }, 30_000);
    await pause(2_500); // rise 2 x inter 1s for every server
    say(`${o.instances} instances up behind HAProxy at ${base} (logs and config in ${dir})`);

    const watching = watch(haproxy, say);
    let lastId = "";
    await witness.subscribe(LiveOrders.name, (m) => void (lastId = m.id));
    load = new Load(base, o.rate);
    load.start();
    await until("the first live message", () => lastId !== "", 30_000);
    await load.subscribe(o.subscribers, o.sseSubscribers, LiveOrders.name, () => lastId);
    say(
      `load running: ${o.rate} writes/s, ${o.rate} reads/s, ${o.subscribers} eventClient and ${o.sseSubscribers} EventSource subscribers`,
    );
    const rssBefore = await Promise.all(instances.map((i) => i.rssMiB()));

    const steps: [string, () => Promise<void>][] = [];
    if (o.roll) {
      for (const i of instances) {
        steps.push([`rolling restart of ${i.name}`, async () => {
          const exit = await i.stop("SIGTERM");
          say(`${i.name} exited (${exit}); starting it again`);
          await i.start();
          await pause(2_500); // HAProxy marks it up (rise 2 x 1s) before the next one goes
        }]);
      }
    }
    if (o.kill) {
      const victim = instances[Math.floor(instances.length / 2)];
      steps.push([`SIGKILL of ${victim.name}`, async () => {
        await victim.stop("SIGKILL");
        await pause(1_000);
        await victim.start();
        await pause(2_500);
      }]);
    }
    if (o.redisRestart) {
      steps.push(["restart of Redis", async () => {
        await redis.down();
        await pause(1_000);
        await redis.up(60_000);
      }]);
    }
    const start = Date.now();
    const gap = o.durationMs / (steps.length + 1);
    for (const [k, [what, run]] of steps.entries()) {
      await pause(Math.max(0, start + (k + 1) * gap * 0.9 - Date.now()));
      say(`${what}: begins`);
      await run();
      say(`${what}: done`);
    }
    await pause(Math.max(0, start + o.durationMs - Date.now()));
    say("load stopping; waiting for the requests in flight");
    await load.stop();

    const key = `${schema}:live:${LiveOrders.name}`;
    say("waiting for every stored order's event to be handled and the queue to empty");
    await until("events to be handled", async () => {
      const [{ orders, handled, left }] = await db`SELECT
        (SELECT count(*)::int FROM orders) AS orders,
        (SELECT count(DISTINCT order_id)::int FROM handled) AS handled,
        (SELECT count(*)::int FROM queue) AS left`;
      return orders === handled && left === 0;
    }, 120_000).catch((e) => say(String(e)));
    const stream = await streamIds(redis.port, key);
    say("waiting for every subscriber to reach the end of the live stream");
    await until("subscribers to catch up", () => {
      const end = stream.at(-1);
      return load!.subscribers.every((s) => s.ids.at(-1) === end);
    }, 60_000).catch((e) => say(String(e)));

    watching.stop();
    const rssAfter = await Promise.all(instances.map((i) => i.rssMiB()));
    const stats = await haproxy.stats();
    const final = await streamIds(redis.port, key);
    const rows: Row[] = [
      ...await dataRows(load, db),
      {
        what: "live messages published (Redis stream)",
        value: String(final.length),
        ok: final.length > 0,
      },
      ...liveRows(
        "eventClient (WebSocket)",
        load.subscribers.filter((s) => s.kind === "ws"),
        final,
      ),
      ...liveRows("EventSource (SSE)", load.subscribers.filter((s) => s.kind === "sse"), final),
      {
        what: "HAProxy retries / redispatches (retry-on conn-failure empty-response)",
        value: `${stats.wretr} / ${stats.wredis}`,
      },
      { what: "HAProxy 5xx answered to clients", value: String(stats.hrsp_5xx) },
      ...instances.map((i, k) => ({
        what: `${i.name} RSS MiB before / after (processes run, exits)`,
        value: `${rssBefore[k]} / ${rssAfter[k]} (${i.starts}: ${i.exits.join(" ")})`,
      })),
    ];
    const report = { rows, ...table(rows) };
    keep = !report.ok;
    return report;
  } finally {
    load?.close();
    await witness.close().catch(() => {});
    await haproxy?.stop();
    await Promise.all(instances.map((i) => i.stop("SIGTERM")));
    await redis.destroy();
    await db.unsafe(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`).catch(() => {});
    await db.end({ timeout: 5 });
    if (keep) say(`kept the logs in ${dir}`);
    else await Deno.remove(dir, { recursive: true }).catch(() => {});
  }
}
