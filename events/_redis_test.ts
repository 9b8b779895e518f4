import assert from "node:assert/strict";
import { checkRedisSource, openRedis } from "./_redis.ts";

Deno.test("openRedis() refuses a missing, doubled or non-Redis source naming the option", () => {
  assert.throws(() => checkRedisSource("kvStream()", {}), /give either "url" or "client"/);
  assert.throws(
    () => checkRedisSource("kvStream()", { url: "http://user:secret@h:1" }),
    (e: Error) =>
      e instanceof TypeError && /option "url": expected a redis:\/\//.test(e.message) &&
      !e.message.includes("secret"),
  );
  assert.throws(
    // deno-lint-ignore no-explicit-any
    () => checkRedisSource("kvStream()", { client: { sendCommand() {} } as any }),
    /option "client": the Redis client has no duplicate\(\) method/,
  );
});

Deno.test("openRedis() fails start-up naming the address it cannot reach", async () => {
  const listener = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  const { port } = listener.addr as Deno.NetAddr;
  listener.close(); // nothing listens there now
  await assert.rejects(
    () => openRedis("kvStream()", { url: `redis://:pw@127.0.0.1:${port}` }),
    (e: Error) =>
      e.message.startsWith(`kvStream() cannot connect to Redis at redis://:***@127.0.0.1:${port}`),
  );
});

Deno.test("openRedis() gives a shared and dedicated connections to the real Redis", async () => {
  const redis = await openRedis("test", { url: "redis://127.0.0.1:6379" });
  try {
    assert.equal(await redis.main.sendCommand(["PING"]), "PONG");
    const blocking = await redis.dedicated();
    const key = `fw:test:${crypto.randomUUID()}`;
    const read = blocking.sendCommand(["BLPOP", key, "5"]);
    await redis.main.sendCommand(["RPUSH", key, "x"]);
    assert.deepEqual(await read, [key, "x"]);
  } finally {
    await redis.close();
  }
});
