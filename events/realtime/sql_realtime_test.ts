import assert from "node:assert/strict";
import { openSql } from "../_postgres.ts";
import { runRealtimeConformance } from "./conformance.ts";
import type { RealtimeGap, RealtimeMessage } from "./realtime.ts";
import { NOTIFY_LIMIT_BYTES, RealtimeMessageTooLargeError, sqlRealtime } from "./sql_realtime.ts";

const URL = Deno.env.get("FW_TEST_POSTGRES_URL") ?? "postgres://root@127.0.0.1:5432/test";
const run = crypto.randomUUID().slice(0, 8);
let prefixes = 0;
const prefixOf = new Map<string, string>();

runRealtimeConformance("sqlRealtime", {
  create: (ns) => {
    let p = prefixOf.get(ns);
    if (!p) prefixOf.set(ns, p = `fwrt_${run}_${++prefixes}`);
    return sqlRealtime({ url: URL, channelPrefix: p, poolSize: 2 });
  },
});

const n = (m: RealtimeMessage) => (m.payload as { n: number }).n;

async function until(check: () => boolean, ms: number, what: string): Promise<void> {
  const end = Date.now() + ms;
  while (!check()) {
    if (Date.now() > end) throw new Error(`Timed out after ${ms} ms waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 10));
  }
}

Deno.test("sqlRealtime() subscribers LISTEN again after their connection is terminated", async () => {
  const app = `fw-rt-test-${crypto.randomUUID().slice(0, 8)}`;
  const prefix = `fwrt_${run}_reconnect`;
  const listener = sqlRealtime({ url: URL, channelPrefix: prefix, applicationName: app });
  const publisher = sqlRealtime({ url: URL, channelPrefix: prefix });
  const admin = await openSql("test", { url: URL }, { max: 1 });
  try {
    const a: number[] = [], b: number[] = [];
    const gaps: RealtimeGap[] = [];
    await listener.subscribe("prices", (m) => void a.push(n(m)), { onGap: (g) => gaps.push(g) });
    await listener.subscribe("prices", (m) => void b.push(n(m)), { onGap: (g) => gaps.push(g) });
    await publisher.publish("prices", { n: 1 });
    await until(() => a.length === 1 && b.length === 1, 5000, "the first message");

    const killed = await admin.sql.unsafe(
      "SELECT pg_terminate_backend(pid) AS ok FROM pg_stat_activity WHERE application_name = $1",
      [app],
    );
    assert.ok(killed.length >= 1, "the listening connection was found and terminated");
    await until(() => gaps.length === 2, 10_000, "both subscribers to learn of the reconnect");
    assert.deepEqual(gaps.map((g) => g.reason), ["disconnected", "disconnected"]);
    assert.equal(gaps[0].topic, "prices");

    await publisher.publish("prices", { n: 2 });
    await until(() => a.length === 2 && b.length === 2, 5000, "the message after the reconnect");
    assert.deepEqual(a, [1, 2]);
    assert.deepEqual(b, [1, 2]);
  } finally {
    await listener.close();
    await publisher.close();
    await admin.close();
  }
});

Deno.test("sqlRealtime() refuses a message over the NOTIFY limit at publish", async () => {
  const broker = sqlRealtime({ url: URL, channelPrefix: `fwrt_${run}_big` });
  try {
    const got: unknown[] = [];
    await broker.subscribe("docs", (m) => void got.push(m.payload));
    await assert.rejects(
      broker.publish("docs", { text: "é".repeat(4000) }),
      (e: unknown) =>
        e instanceof RealtimeMessageTooLargeError && e.bytes > NOTIFY_LIMIT_BYTES &&
        /Cannot publish to realtime topic "docs": the message is \d+ bytes, over the 7999-byte NOTIFY limit/
          .test(e.message),
    );
    await broker.publish("docs", { text: "x".repeat(7000) });
    await until(() => got.length === 1, 5000, "the message under the limit");
  } finally {
    await broker.close();
  }
});

Deno.test("sqlRealtime() maps a long topic name to a hashed channel and keeps topics apart", async () => {
  const broker = sqlRealtime({ url: URL, channelPrefix: `fwrt_${run}_long` });
  try {
    const long1 = "orders." + "x".repeat(80) + ".one", long2 = "orders." + "x".repeat(80) + ".two";
    const one: number[] = [], two: number[] = [];
    await broker.subscribe(long1, (m) => void one.push(n(m)));
    await broker.subscribe(long2, (m) => void two.push(n(m)));
    await broker.publish(long1, { n: 1 });
    await broker.publish(long2, { n: 2 });
    await until(() => one.length === 1 && two.length === 1, 5000, "both long topics");
    assert.deepEqual([one, two], [[1], [2]]);
  } finally {
    await broker.close();
  }
});

Deno.test("sqlRealtime() checks its options and names host and database when it cannot connect", async () => {
  assert.throws(
    () => sqlRealtime({ url: URL, channelPrefix: "bad prefix; DROP" }),
    /Invalid sqlRealtime\(\) option "channelPrefix"/,
  );
  assert.throws(() => sqlRealtime({ channelPrefix: "ok" }), /give either "url" or "client"/);
  const broker = sqlRealtime({
    url: "postgres://root:s3cret-pw@127.0.0.1:1/nowhere_db",
    channelPrefix: "x",
  });
  await assert.rejects(broker.publish("t", {}), (e: unknown) => {
    const message = (e as Error).message;
    assert.match(
      message,
      /^sqlRealtime\(\) cannot connect to PostgreSQL at host "127.0.0.1:1", database "nowhere_db": /,
    );
    assert.ok(!message.includes("s3cret-pw"), "no password in the message");
    return true;
  });
  await broker.close();
});
