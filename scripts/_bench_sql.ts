/**
 * The PostgreSQL part of `deno task bench:events`: fw's `sqlTransport` and pg-boss doing the same
 * work on the same database in the same run. Each system handles `--sql-messages` (20,000) small
 * jobs whose payload is validated at publish and at the handler, with handler concurrency 1 and
 * 50; 64 concurrent publishers send one job per call (no batch insert on either side), and at most
 * 1,000 jobs are in flight (published, not yet handled). (fw's transport coalesces the publishes
 * that wait for a free connection into one multi-row statement; the callers still publish one job
 * per call.) Throughput is jobs per second from the first publish to the last handler entry;
 * latency is publish call to handler entry (p50, p99).
 *
 * pg-boss (12.x) runs under Deno with the settings its documentation gives for throughput and low
 * latency: the LISTEN/NOTIFY listener on (`useListenNotify`, queue `notify: true`), the 0.5 s
 * minimum polling intervals, `localConcurrency` equal to the concurrency, batches of 20 jobs per
 * fetch with `burstWhenBatchFull` (fetch again at once while batches come back full; with one job
 * per fetch pg-boss waits a polling interval between jobs), each batch handled in order.
 *
 * pg-boss also has an opt-in LISTEN/NOTIFY wake-up (`--boss-notify` adds it as a third system);
 * it sends the NOTIFY inside each job's insert, which serialises those commits on PostgreSQL's
 * notify lock, so it is slower here than polling.
 *
 * `raw-sql` is the floor: the same jobs through a bare PostgreSQL loop on the same client
 * (postgres.js, pool of 10), doing what fw's transport must do at the least and nothing else.
 * One table (`id`, the job's JSON, `available_at`); each publish is one prepared `INSERT` (64
 * publishers, as for fw), followed by a `NOTIFY` sent after the commit, at most one in flight and
 * coalesced (a `NOTIFY` inside the insert would serialise the commits); one consumer `LISTEN`s,
 * claims up to 100 ready rows per statement with `FOR UPDATE SKIP LOCKED`, moving their
 * `available_at` to a visibility deadline (the least an at-least-once claim needs: a row of a
 * consumer that died comes back), claims again at once while batches come back full, validates
 * and handles each job in order, and deletes a handled batch with one `DELETE ... = ANY($1)`,
 * coalesced while one runs. No envelope, groups, heartbeat, attempts or dead letters; the
 * handler concurrency does not apply to it.
 *
 * Rounds (`--sql-rounds`, default 2) alternate the order of the systems; the table shows each
 * system's median over the rounds and the per-round throughput ratios (fw / that system). Each
 * run uses fresh schemas, dropped afterwards. Quick run: `--sql-messages 2000 --sql-rounds 1`.
 * `--only-sql fw,raw` (here and in `bench:events`) runs some of the systems (`fw`, `boss`, `raw`).
 *
 * @module
 */

import { compile, createLogger, Int, MinLength, Uuid } from "@fw/runtime";
import { EventBus, getPublisher, handler, topic } from "@fw/events";
import { sqlTransport } from "@fw/events/sql";
import { PgBoss } from "pg-boss";
import { median } from "./_stats.ts";

/** Options of {@linkcode benchSql}. */
export interface SqlBenchOptions {
  /** Jobs per run (default 20,000). */
  readonly messages?: number;
  /** Rounds (default 3). */
  readonly rounds?: number;
  /** Database (default the local test database). */
  readonly url?: string;
  /** Handler concurrencies (default 1 and 50). */
  readonly concurrencies?: readonly number[];
  /** Also run pg-boss with its LISTEN/NOTIFY wake-ups (a third system; default false). */
  readonly bossNotify?: boolean;
  /** Systems to run (`fw`, `boss`, `raw`; default all). */
  readonly systems?: ReadonlySet<string>;
}

interface Result {
  rate: number;
  p50: number;
  p99: number;
}

const Payload = { id: Uuid, customer: MinLength(1), items: Int, total: Int };
const Job = topic("bench.sql.job", Payload);
const ID = "6f1c2a5e-8a3b-4f1e-9d2c-1b2a3c4d5e6f";
const PUBLISHERS = 64;
const WINDOW = 1000;

/** Publishes n jobs through `send` and waits for the handler; returns throughput and latency. */
async function drive(
  n: number,
  send: (i: number) => Promise<unknown>,
  track: { handled: number; onHandled?: () => void; sent: Float64Array; latency: Float64Array },
): Promise<Result> {
  let next = 0;
  const start = performance.now();
  const all = new Promise<void>((resolve) => {
    track.onHandled = () => {
      if (track.handled === n) resolve();
    };
  });
  await Promise.all(Array.from({ length: PUBLISHERS }, async () => {
    while (next < n) {
      while (next - track.handled >= WINDOW) await new Promise((r) => setTimeout(r, 1));
      const i = next++;
      track.sent[i] = performance.now();
      await send(i);
    }
  }));
  await all;
  const elapsed = performance.now() - start;
  const sorted = track.latency.slice().sort();
  const at = (p: number) => sorted[Math.min(n - 1, Math.floor(n * p))];
  return { rate: n / (elapsed / 1000), p50: at(0.5), p99: at(0.99) };
}

function tracker(n: number) {
  return {
    handled: 0,
    onHandled: undefined as (() => void) | undefined,
    sent: new Float64Array(n),
    latency: new Float64Array(n),
    seen(i: number) {
      this.latency[i] = performance.now() - this.sent[i];
      this.handled++;
      this.onHandled?.();
    },
  };
}

const schemaName = (tag: string) => `bench_${tag}_${crypto.randomUUID().slice(0, 8)}`;

/** Drops a schema with everything in it (each run uses fresh schemas). */
export async function dropSchema(url: string, schema: string): Promise<void> {
  const { openSql } = await import("../events/_postgres.ts");
  const c = await openSql("bench", { url }, { max: 1 });
  await c.sql.unsafe(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
  await c.close();
}

async function runFw(url: string, n: number, concurrency: number): Promise<Result> {
  const schema = schemaName("fw");
  const transport = sqlTransport({ url, schema, poolSize: 10 });
  await transport.migrate();
  const bus = new EventBus({
    transports: { pg: transport },
    logger: createLogger({ level: "warn" }),
  });
  const t = tracker(n);
  await bus.add(
    handler(Job).options({ group: "bench", concurrency }).handle(async (m) => {
      t.seen(m.payload.items);
      await Promise.resolve();
    }),
  );
  await bus.start();
  const publish = getPublisher(Job, { bus });
  try {
    return await drive(n, (i) => publish({ id: ID, customer: "c", items: i, total: 5 }), t);
  } finally {
    await bus.stop();
    await dropSchema(url, schema);
  }
}

async function runBoss(
  url: string,
  n: number,
  concurrency: number,
  notify: boolean,
): Promise<Result> {
  const schema = schemaName("boss");
  const validate = compile(Payload, "payload");
  const boss = new PgBoss({ connectionString: url, schema, useListenNotify: notify, max: 10 });
  boss.on("error", () => {});
  await boss.start();
  const queue = "bench-job";
  await boss.createQueue(queue, { notify });
  const t = tracker(n);
  await boss.work<{ items: number }>(queue, {
    localConcurrency: concurrency,
    batchSize: 20,
    burstWhenBatchFull: true,
    pollingIntervalSeconds: 0.5,
    notifyPollingIntervalSeconds: 0.5,
  }, async (jobs) => {
    for (const job of jobs) {
      if (!validate(job.data).ok) throw new Error("invalid payload");
      t.seen(job.data.items);
    }
    await Promise.resolve();
  });
  try {
    return await drive(n, (i) => {
      const data = { id: ID, customer: "c", items: i, total: 5 };
      if (!validate(data).ok) return Promise.reject(new Error("invalid payload"));
      return boss.send(queue, data);
    }, t);
  } finally {
    await boss.stop({ graceful: false, timeout: 1000 });
    await dropSchema(url, schema);
  }
}

/** The floor: a bare `SKIP LOCKED` loop on one table (see the module notes). */
async function runRaw(url: string, n: number): Promise<Result> {
  const { openSql, quoteIdent } = await import("../events/_postgres.ts");
  const schema = schemaName("raw");
  const s = quoteIdent(schema);
  const channel = `${schema}.wake`;
  const c = await openSql("bench", { url }, { max: 10 });
  const sql = c.sql;
  await sql.unsafe(`CREATE SCHEMA ${s};
CREATE TABLE ${s}.q (
  id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  job json NOT NULL,
  available_at timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX ON ${s}.q (available_at)`);
  const insert = `INSERT INTO ${s}.q (job) VALUES ($1::text::json)`;
  const claim = `UPDATE ${s}.q AS q SET available_at = now() + interval '30 seconds'
FROM (SELECT id FROM ${s}.q WHERE available_at <= now() ORDER BY available_at LIMIT $1
  FOR UPDATE SKIP LOCKED) AS c
WHERE q.id = c.id RETURNING q.id, q.job`;
  const remove = `DELETE FROM ${s}.q WHERE id = ANY($1::bigint[])`;
  const validate = compile(Payload, "payload");
  const t = tracker(n);
  const BATCH = 100;
  // Wake-ups after commit: one NOTIFY in flight, the ones asked for meanwhile coalesced.
  let notifying = false, notifyAgain = false;
  const notify = async () => {
    if (notifying) return void (notifyAgain = true);
    notifying = true;
    do {
      notifyAgain = false;
      await sql.unsafe("SELECT pg_notify($1, '')", [channel], { prepare: true });
    } while (notifyAgain);
    notifying = false;
  };
  // Deletes of handled rows: one in flight, the ids handled meanwhile go in the next.
  let done: string[] = [], deleting: Promise<void> | undefined;
  const flush = async () => {
    while (done.length) {
      const ids = done;
      done = [];
      await sql.unsafe(remove, [ids], { prepare: true });
    }
  };
  let claiming = false, wanted = false, closed = false;
  const consume = async () => {
    if (claiming) return void (wanted = true);
    claiming = true;
    do {
      wanted = false;
      const rows = await sql.unsafe(claim, [BATCH], { prepare: true }) as unknown as {
        id: string;
        job: { items: number };
      }[];
      for (const row of rows) {
        if (!validate(row.job).ok) throw new Error("invalid payload");
        t.seen(row.job.items);
        await Promise.resolve();
        done.push(row.id);
      }
      if (done.length && !deleting) deleting = flush().finally(() => deleting = undefined);
      if (rows.length === BATCH) wanted = true;
    } while (wanted && !closed);
    claiming = false;
  };
  const listening = await sql.listen(channel, () => void consume());
  try {
    return await drive(n, async (i) => {
      const data = { id: ID, customer: "c", items: i, total: 5 };
      if (!validate(data).ok) throw new Error("invalid payload");
      await sql.unsafe(insert, [JSON.stringify(data)], { prepare: true });
      void notify();
    }, t);
  } finally {
    closed = true;
    await listening.unlisten();
    while (claiming || notifying || deleting) await new Promise((r) => setTimeout(r, 5));
    await flush();
    await c.close();
    await dropSchema(url, schema);
  }
}

/**
 * Runs the comparison and prints its table.
 *
 * @param options Sizes and database.
 * @returns Each row's rate per round, by `<system>@<concurrency>` (for bench:events' verdicts).
 */
export async function benchSql(options: SqlBenchOptions = {}): Promise<Map<string, number[]>> {
  const url = options.url ?? "postgres://root@127.0.0.1:5432/test";
  const n = options.messages ?? 20_000;
  const rounds = options.rounds ?? 2;
  const concurrencies = options.concurrencies ?? [1, 50];
  const want = (name: string) => !options.systems || options.systems.has(name);
  const systems: Array<[string, (c: number) => Promise<Result>]> = [];
  if (want("fw")) systems.push(["fw sql", (c) => runFw(url, n, c)]);
  if (want("boss")) systems.push(["pg-boss", (c) => runBoss(url, n, c, false)]);
  if (options.bossNotify) systems.push(["pg-boss+notify", (c) => runBoss(url, n, c, true)]);
  if (want("raw")) systems.push(["raw-sql", () => runRaw(url, n)]);
  const results = new Map<string, Result[]>();
  for (let round = 1; round <= rounds; round++) {
    for (const c of concurrencies) {
      for (const [name, run] of round % 2 ? systems : [...systems].reverse()) {
        const r = await run(c);
        const key = `${name}@${c}`;
        results.set(key, [...(results.get(key) ?? []), r]);
        console.error(
          `round ${round} ${key.padEnd(12)} ${Math.round(r.rate).toLocaleString("en")} jobs/s p50 ${
            r.p50.toFixed(1)
          } ms`,
        );
      }
    }
  }
  const fmt = (x: number) => Math.round(x).toLocaleString("en");
  console.log(
    `\nPostgreSQL (${n.toLocaleString("en")} jobs, ${rounds} rounds, medians)\n` +
      "system          concurrency     jobs/s   p50 ms   p99 ms   fw throughput / this, per round",
  );
  for (const c of concurrencies) {
    const fw = results.get(`fw sql@${c}`);
    for (const [name] of systems) {
      const rs = results.get(`${name}@${c}`)!;
      const ratios = fw ? rs.map((r, i) => (fw[i].rate / r.rate).toFixed(2)).join(" ") : "-";
      console.log(
        `${name.padEnd(15)} ${String(c).padStart(11)} ${
          fmt(median(rs.map((r) => r.rate))).padStart(10)
        } ${median(rs.map((r) => r.p50)).toFixed(1).padStart(8)} ${
          median(rs.map((r) => r.p99)).toFixed(1).padStart(8)
        }   ${name === "fw sql" ? "-" : ratios}`,
      );
    }
  }
  return new Map([...results].map(([k, rs]) => [k, rs.map((r) => r.rate)]));
}

if (import.meta.main) {
  const args = Object.fromEntries(
    Deno.args.map((a, i, all) => a.startsWith("--") ? [a.slice(2), all[i + 1]] : [])
      .filter((x) => x.length),
  );
  await benchSql({
    messages: args["sql-messages"] ? Number(args["sql-messages"]) : undefined,
    rounds: args["sql-rounds"] ? Number(args["sql-rounds"]) : undefined,
    bossNotify: "boss-notify" in args,
    ...(args["only-sql"] ? { systems: new Set(String(args["only-sql"]).split(",")) } : {}),
  });
}
