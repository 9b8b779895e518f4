import assert from "node:assert/strict";
import { createLogger, MemorySink } from "@fw/runtime";
import { openRedis, type RedisClient } from "../_redis.ts";
import { kvPubSub } from "./kv_pubsub.ts";
import { runRealtimeConformance } from "./conformance.ts";
import type { RealtimeGap, RealtimeMessage } from "./realtime.ts";
import { killClients, until } from "./testdata/redis_support.ts";

const URL = "redis://127.0.0.1:6379";
const run = crypto.randomUUID().slice(0, 8);

// Pub/sub keeps no keys: nothing to clean up but the connections each broker closes.
runRealtimeConformance("kvPubSub", {
  create: (ns) => kvPubSub({ url: URL, keyPrefix: `fwtest:${run}:${ns}:` }),
});

Deno.test("kvPubSub() ids: <created ms>-<broker number>-<per-topic sequence>", async () => {
  const a = kvPubSub({ url: URL, keyPrefix: `fwtest:${run}:ids:` });
  const b = kvPubSub({ url: URL, keyPrefix: `fwtest:${run}:ids:` });
  try {
    const fromA = [await a.publish("x", 1), await a.publish("x", 2), await a.publish("y", 3)];
    const fromB = await b.publish("x", 4);
    const parts = fromA.map((m) => m.id.split("-"));
    assert.ok(parts.every((p) => p.length === 3 && p.every((d) => /^\d+$/.test(d))));
    assert.deepEqual(parts.map((p) => p[2]), ["1", "2", "1"]);
    assert.equal(parts[0][0] + parts[0][1], parts[2][0] + parts[2][1], "one origin per broker");
    assert.ok(!fromA.some((m) => m.id === fromB.id), "another broker's ids differ");
  } finally {
    await a.close();
    await b.close();
  }
});

Deno.test("kvPubSub() reports a lost connection as a gap and carries on live", async () => {
  const prefix = `fwtest:${run}:${crypto.randomUUID().slice(0, 8)}:`;
  const broker = kvPubSub({ url: URL, keyPrefix: prefix });
  try {
    const got: RealtimeMessage[] = [], gaps: RealtimeGap[] = [];
    await broker.subscribe("t", (m) => void got.push(m), { onGap: (g) => void gaps.push(g) });
    const first = await broker.publish("t", { n: 1 });
    await until(() => got.length === 1, "the first message");
    assert.equal(await killClients(`fw:kvpubsub:${prefix}`), 1);
    await until(() => gaps.length === 1, "the gap after the reconnect");
    assert.deepEqual(gaps, [{ topic: "t", after: first.id, reason: "disconnected" }]);
    // Subscribed again by the client: live delivery resumes.
    for (let i = 0; i < 500 && got.length === 1; i++) {
      await broker.publish("t", { n: 2 });
      await new Promise((r) => setTimeout(r, 10));
    }
    assert.deepEqual(got[1]?.payload, { n: 2 }, "a live message after the reconnect");
  } finally {
    await broker.close();
  }
});

Deno.test("kvPubSub() subscribes again after every subscription of a topic closed", async () => {
  const broker = kvPubSub({ url: URL, keyPrefix: `fwtest:${run}:again:` });
  try {
    const first: unknown[] = [];
    const sub = await broker.subscribe("t", (m) => void first.push(m.payload));
    await sub.close();
    const second: unknown[] = [];
    await broker.subscribe("t", (m) => void second.push(m.payload));
    await broker.publish("t", "hello");
    await until(() => second.length === 1, "the message");
    assert.deepEqual(first, []);
    assert.deepEqual(second, ["hello"]);
  } finally {
    await broker.close();
  }
});

Deno.test("kvPubSub() logs and skips a message fw did not publish", async () => {
  const sink = new MemorySink();
  const prefix = `fwtest:${run}:foreign:`;
  const broker = kvPubSub({ url: URL, keyPrefix: prefix, logger: createLogger({ sink }) });
  try {
    const got: unknown[] = [];
    await broker.subscribe("t", (m) => void got.push(m.payload));
    const redis = await openRedis("test", { url: URL });
    try {
      await redis.main.sendCommand(["PUBLISH", `${prefix}t`, "not json"]);
    } finally {
      await redis.close();
    }
    await broker.publish("t", 7);
    await until(() => got.length === 1, "the valid message");
    assert.deepEqual(got, [7]);
    assert.equal(sink.records[0]?.message, "kvPubSub skipped a message it cannot read");
  } finally {
    await broker.close();
  }
});

Deno.test("kvPubSub() rejects invalid options at creation and names the address at start-up", async () => {
  assert.throws(() => kvPubSub({}), /Invalid kvPubSub\(\) options: give either "url" or "client"/);
  assert.throws(
    () => kvPubSub({ url: URL, keyPrefix: "" }),
    /Invalid kvPubSub\(\) option "keyPrefix": expected a non-empty string/,
  );
  const noPubSub = {
    sendCommand: () => Promise.resolve(null),
    duplicate: () => noPubSub,
    connect: () => Promise.resolve(),
    close: () => Promise.resolve(),
    on: () => noPubSub,
  } as RedisClient;
  assert.throws(
    () => kvPubSub({ client: noPubSub }),
    /Invalid kvPubSub\(\) option "client": the Redis client has no subscribe\(\)/,
  );
  const listener = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  const { port } = listener.addr as Deno.NetAddr;
  listener.close();
  const broker = kvPubSub({ url: `redis://127.0.0.1:${port}` });
  await assert.rejects(
    broker.subscribe("t", () => {}),
    new RegExp(`kvPubSub\\(\\) cannot connect to Redis at redis://127\\.0\\.0\\.1:${port}`),
  );
  await broker.close();
});
