import assert from "node:assert/strict";
import { Int, ManualClock } from "@fw/runtime";
import { handler } from "../../handler.ts";
import type { HandlerOptions, Message } from "../../handler_types.ts";
import { getPublisher } from "../../publisher.ts";
import { topic } from "../../topic.ts";
import type { SqlClient } from "../../_postgres.ts";
import { runTransportConformance } from "../conformance.ts";
import { SqlTransport, sqlTransport } from "./sql_transport.ts";
import { dropSchemas, PG_URL, randomSchema, until, withPg } from "./testdata/pg_env.ts";

const schemas = new Map<string, string>();
const schemaOf = (ns: string) => {
  let s = schemas.get(ns);
  if (!s) schemas.set(ns, s = randomSchema("conf"));
  return s;
};

runTransportConformance("SqlTransport", {
  // Each create() opens its own client, as another process would; one schema per test.
  create: (ns) => new SqlTransport({ url: PG_URL, schema: schemaOf(ns), poolSize: 3 }),
  cleanup: (namespaces) => dropSchemas(namespaces.map(schemaOf)),
  timeoutMs: 10_000,
});

const Order = topic("sql.order", { id: Int });
const FAST: HandlerOptions = { maxBackoff: 20, jitter: 0, timeout: 2000 };

type Begin = { begin<T>(fn: (tx: SqlClient) => Promise<T>): Promise<T> };

Deno.test("sqlTransport publish({ tx }) delivers on commit and nothing on rollback (outbox)", async () => {
  await withPg("outbox", async (track) => {
    const app = await track.admin();
    const sql = app.sql as SqlClient & Begin;
    const transport = track.transport({ client: sql });
    const bus = track.bus(transport);
    const seen: number[] = [];
    await bus.add(
      handler(Order).options({ ...FAST, group: "mailer" }).handle((m) => {
        seen.push(m.payload.id);
      }),
    );
    await bus.start();
    const publish = getPublisher(Order, { bus });
    const table = `"${track.schema}".orders`;
    await sql.unsafe(`CREATE TABLE ${table} (id int PRIMARY KEY)`);

    await sql.begin(async (tx) => {
      await tx.unsafe(`INSERT INTO ${table} (id) VALUES ($1)`, [1]);
      await publish({ id: 1 }, { tx });
    });
    await assert.rejects(
      sql.begin(async (tx) => {
        await tx.unsafe(`INSERT INTO ${table} (id) VALUES ($1)`, [2]);
        await publish({ id: 2 }, { tx });
        throw new Error("payment declined");
      }),
      /payment declined/,
    );
    await publish({ id: 3 });
    await until(() => seen.length >= 2, 5000, "the committed and the plain message");
    await new Promise((r) => setTimeout(r, 300));
    assert.deepEqual([...seen].sort(), [1, 3], "the rolled-back message was never delivered");
    const rows = await sql.unsafe(`SELECT id FROM ${table} ORDER BY id`);
    assert.deepEqual(rows.map((r) => r.id), [1]);
    const left = await sql.unsafe(`SELECT count(*)::int AS n FROM "${track.schema}".queue`);
    assert.equal(left[0].n, 0);
  });
});

Deno.test("sqlTransport rejects a tx on a transport that cannot publish in a transaction", async () => {
  const { EventBus } = await import("../../event_bus.ts");
  const { MemoryBroker } = await import("../memory_broker.ts");
  const bus = new EventBus({ transports: { memory: new MemoryBroker() } });
  await assert.rejects(
    getPublisher(Order, { bus })({ id: 1 }, { tx: {} }),
    /Invalid publish option "tx" for topic "sql.order": transport "memory" cannot publish in a transaction/,
  );
  await bus.stop();
});

Deno.test("sqlTransport dead-letters a row whose envelope is not an fw envelope, with the reason", async () => {
  await withPg("badrow", async (track) => {
    const transport = track.transport();
    const bus = track.bus(transport);
    const seen: number[] = [];
    await bus.add(
      handler(Order).options({ ...FAST, group: "g" }).handle((m) => {
        seen.push(m.payload.id);
      }),
    );
    await bus.start();
    const admin = await track.admin();
    await admin.sql.unsafe(
      `INSERT INTO "${track.schema}".queue (topic, grp, envelope) VALUES ($1, 'g', $2::text::json)`,
      ["sql.order", JSON.stringify({ hello: "not an envelope", id: "raw-1" })],
    );
    await admin.sql.unsafe(`SELECT pg_notify($1, 'sql.order')`, [`${track.schema}.wake`]);
    await getPublisher(Order, { bus })({ id: 9 });
    await until(
      async () => (await bus.deadLetters()).length === 1 && seen.length === 1,
      5000,
      "dlq",
    );
    const [dead] = await bus.deadLetters({ topic: "sql.order" });
    assert.equal(dead.envelope.id, "raw-1");
    assert.equal(dead.envelope.topic, "sql.order.dlq");
    assert.match(
      dead.envelope.attributes["dlq.error"],
      /^malformed envelope: envelope field "topic"/,
    );
    assert.deepEqual(seen, [9]);
  });
});

Deno.test("sqlTransport honours dedupe keys and redrives bounded dead letters", async () => {
  await withPg("dedupe", async (track) => {
    const transport = track.transport({ deadLetterLimit: 2 });
    const bus = track.bus(transport);
    const attempts: number[] = [];
    let broken = true;
    await bus.add(
      handler(Order).options({ ...FAST, group: "g", maxRetries: 0 }).handle((m) => {
        attempts.push(m.payload.id);
        if (broken) throw new Error(`broken ${m.payload.id}`);
      }),
    );
    await bus.start();
    const publish = getPublisher(Order, { bus });
    await publish({ id: 1 }, { dedupeKey: "order-1" });
    await publish({ id: 1 }, { dedupeKey: "order-1" });
    for (const id of [2, 3]) await publish({ id });
    await until(() => track.meter.sum("events.handle.sql.order.dlq") === 3, 5000, "3 dead letters");
    assert.deepEqual([...attempts].sort(), [1, 2, 3], "the repeated dedupe key was dropped");
    const kept = await bus.deadLetters({ topic: "sql.order" });
    assert.equal(kept.length, 2, "bounded per topic: the oldest was evicted");
    assert.equal(track.meter.sum("events.dlq.evicted"), 1);
    broken = false;
    assert.equal(await bus.redrive(), 2);
    await until(() => attempts.length === 5, 5000, "the redriven messages");
    assert.equal((await bus.deadLetters()).length, 0);
  });
});

Deno.test("sqlTransport reaps a broadcast instance that stopped beating, with its rows", async () => {
  await withPg("reap", async (track) => {
    const clock = new ManualClock(Date.now());
    // A TTL far longer than a loaded machine can take between start-up and the publish: the
    // manual clock sends no heartbeat before the advance below, and an expired live instance
    // would get no copy.
    const transport = track.transport({ clock, instanceTtlMs: 60_000, pollIntervalMs: 100_000 });
    const bus = track.bus(transport);
    const seen: number[] = [];
    await bus.add(
      handler(Order).options({ ...FAST, group: "cache", distribution: "broadcast" })
        .handle((m) => void seen.push(m.payload.id)),
    );
    await bus.start();
    const admin = await track.admin();
    const s = `"${track.schema}"`;
    // A second instance in a process that died: registered, expired, with a row addressed to it.
    await admin.sql.unsafe(
      `INSERT INTO ${s}.instances VALUES ('sql.order', 'cache', 'dead-1', 'gone', now() - interval '1 second')`,
    );
    await admin.sql.unsafe(
      `INSERT INTO ${s}.queue (topic, grp, instance, envelope) VALUES ('sql.order', 'cache', 'dead-1', '{}')`,
    );
    await getPublisher(Order, { bus })({ id: 5 });
    await until(() => seen.length === 1, 5000, "the live instance's copy");
    await clock.advance(10_000); // one heartbeat round (every min(TTL, visibility) / 3): beat, extend, reap
    await until(
      async () => {
        const rows = await admin.sql.unsafe(`SELECT count(*)::int AS n FROM ${s}.instances`);
        return rows[0].n === 1;
      },
      5000,
      "the reap",
    );
    const left = await admin.sql.unsafe(`SELECT count(*)::int AS n FROM ${s}.queue`);
    assert.equal(left[0].n, 0, "the dead instance's row went with it");
    assert.ok(track.sink.records.some((r) => r.message.startsWith("sql transport: reaped")));
  });
});

Deno.test("sqlTransport fails start-up naming host and database, never the password", async () => {
  const t = sqlTransport({ url: "postgres://root:hunter2-secret@127.0.0.1:1/orders_db" });
  const err = await t.migrate().then(() => undefined, (e: Error) => e);
  assert.ok(err);
  assert.match(
    err.message,
    /^sqlTransport\(\) cannot connect to PostgreSQL at host "127.0.0.1:1", database "orders_db": /,
  );
  assert.ok(!err.message.includes("hunter2-secret"));
  await t.close();
});

Deno.test("sqlTransport checks its options at construction", () => {
  assert.throws(
    () => sqlTransport({ url: PG_URL, schema: 'x"; DROP TABLE users; --' }),
    /Invalid sqlTransport\(\) option "schema" "x\\"; DROP TABLE users; --": expected letters/,
  );
  assert.throws(() => sqlTransport({}), /give either "url" or "client"/);
  assert.throws(
    () => sqlTransport({ url: "mysql://x/y" }),
    /option "url": expected a postgres:\/\/ URL, got host "x", database "y"/,
  );
  assert.throws(
    () => sqlTransport({ url: PG_URL, visibilityTimeoutMs: 5 }),
    /option "visibilityTimeoutMs" 5: expected an integer >= 100/,
  );
});

Deno.test("sqlTransport keeps group names as data, never as SQL", async () => {
  await withPg("names", async (track) => {
    const Odd = topic("sql.odd", { id: Int });
    const bus = track.bus(track.transport());
    const got: Message<{ id: number }>[] = [];
    await bus.add(
      handler(Odd).options({ ...FAST, group: "g'1\"; DROP SCHEMA x; --" }).handle((m) =>
        void got.push(m)
      ),
    );
    await bus.start();
    await getPublisher(Odd, { bus })({ id: 1 });
    await until(() => got.length === 1, 5000, "the delivery");
    assert.equal(got[0].topic, "sql.odd");
  });
});

Deno.test("sqlTransport coalesces plain publishes that wait for the pool, each with its own outcome", async () => {
  await withPg("coalesce", async (track) => {
    const admin = await track.admin();
    const statements: string[] = [];
    const client = {
      unsafe: (text: string, params?: unknown[], options?: { prepare?: boolean }) => {
        statements.push(text);
        return admin.sql.unsafe(text, params, options);
      },
      listen: admin.sql.listen.bind(admin.sql),
      end: () => Promise.resolve(),
    } as unknown as SqlClient;
    // One statement in flight: every publish made meanwhile waits and goes in the next one.
    const transport = track.transport({ client, poolSize: 1 });
    const bus = track.bus(transport);
    const seen: Record<string, number[]> = { a: [], b: [], c: [] };
    for (const group of ["a", "b"]) {
      await bus.add(
        handler(Order).options({ ...FAST, group }).handle((m) =>
          void seen[group].push(m.payload.id)
        ),
      );
    }
    await bus.add(
      handler(Order).options({ ...FAST, group: "c", distribution: "broadcast" })
        .handle((m) => void seen.c.push(m.payload.id)),
    );
    await bus.start();
    const publish = getPublisher(Order, { bus });
    const Other = topic("sql.nobody", { id: Int });
    const ids = Array.from({ length: 40 }, (_, i) => i + 1);
    // A topic PostgreSQL refuses (a NUL byte in text) fails its own publish, not the others.
    const bad = { id: crypto.randomUUID(), topic: "sql.\u0000bad", payload: {}, attributes: {} };
    const outcomes = await Promise.allSettled([
      ...ids.map((id) => publish({ id })),
      transport.publish({ ...bad, traceId: "0".repeat(32), publishedAt: Date.now() }),
      getPublisher(Other, { bus })({ id: 0 }),
    ]);
    assert.deepEqual(outcomes.slice(0, 40).map((o) => o.status), ids.map(() => "fulfilled"));
    assert.equal(outcomes[40].status, "rejected");
    assert.match(
      String((outcomes[40] as PromiseRejectedResult).reason),
      /Cannot publish to topic "sql\..bad" on PostgreSQL/,
    );
    assert.equal(outcomes[41].status, "fulfilled");
    assert.ok(
      statements.some((s) => s.includes("unnest($1::text[], $2::text[])")),
      "publishes were coalesced into a multi-row statement",
    );
    await until(
      () => Object.values(seen).every((got) => got.length >= ids.length),
      10_000,
      "one copy per group",
    );
    for (const [group, got] of Object.entries(seen)) {
      assert.deepEqual([...got].sort((x, y) => x - y), ids, `group ${group}: each once`);
    }
  });
});

Deno.test("sqlTransport migrates idempotently and LISTENs again after its connections are terminated", async () => {
  await withPg("relisten", async (track) => {
    const app = `fw-relisten-${crypto.randomUUID().slice(0, 8)}`;
    // No polling to fall back on: only the wake-ups (and the catch-up after re-LISTEN) deliver.
    const consumer = track.transport({ applicationName: app, pollIntervalMs: 600_000 });
    const publisher = track.transport();
    await Promise.all([consumer.migrate(), publisher.migrate(), consumer.migrate()]);
    const bus = track.bus(consumer);
    const seen: number[] = [];
    await bus.add(
      handler(Order).options({ ...FAST, group: "g" }).handle((m) => {
        seen.push(m.payload.id);
      }),
    );
    await bus.start();
    const publish = getPublisher(Order, { bus: track.bus(publisher) });
    await publish({ id: 1 });
    await until(() => seen.length === 1, 5000, "the first message");
    const admin = await track.admin();
    const killed = await admin.sql.unsafe(
      "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE application_name = $1",
      [app],
    );
    assert.ok(killed.length >= 2, `the consumer's connections were terminated (${killed.length})`);
    await publish({ id: 2 }); // may land while the consumer is not listening
    await until(() => seen.length === 2, 10_000, "the message published around the reconnect");
    await publish({ id: 3 });
    await until(() => seen.length === 3, 10_000, "a message after the reconnect");
    assert.deepEqual(seen, [1, 2, 3]);
  });
});

Deno.test("a lost connection that postgres.js leaves unhandled (its reconnect's type fetch) is a warning, not a crash; other unhandled rejections still end the process", async () => {
  const run = async (code: string) => {
    const script = `
      import { openSql } from "./events/_postgres.ts";
      const conn = await openSql("test", { url: ${JSON.stringify(PG_URL)} });
      Promise.reject(Object.assign(new Error("terminating connection"), { code: ${
      JSON.stringify(code)
    } }));
      await new Promise((r) => setTimeout(r, 50));
      console.log("alive");
      await conn.close();
    `;
    const out = await new Deno.Command(Deno.execPath(), {
      args: ["eval", "--ext=ts", script],
      cwd: new URL("../../../", import.meta.url).pathname,
      stdout: "piped",
      stderr: "piped",
    }).output();
    return {
      code: out.code,
      stdout: new TextDecoder().decode(out.stdout).trim(),
      stderr: new TextDecoder().decode(out.stderr),
    };
  };
  const lost = await run("57P01");
  assert.equal(lost.code, 0, lost.stderr);
  assert.equal(lost.stdout, "alive");
  assert.match(
    lost.stderr,
    /postgres: a connection was lost during the driver's own set-up query \(57P01: terminating connection\)/,
  );
  const other = await run("EOTHER");
  assert.notEqual(other.code, 0);
  assert.equal(other.stdout, "");
  assert.match(other.stderr, /Uncaught \(in promise\) Error: terminating connection/);
});
