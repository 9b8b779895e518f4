import assert from "node:assert/strict";
import { endpoint } from "../endpoint.ts";
import { redisRateLimitStore } from "./redis_rate_limit.ts";
import { get, serve } from "../testdata/policy_app.ts";

function freePort(): number {
  const l = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  const port = (l.addr as Deno.NetAddr).port;
  l.close();
  return port;
}

/** A redis-server of the test's own, on a free port, persisting every write to its temp dir. */
async function startRedis(port: number, dir: string): Promise<Deno.ChildProcess> {
  const child = new Deno.Command("redis-server", {
    args: [
      "--port",
      String(port),
      "--bind",
      "127.0.0.1",
      "--dir",
      dir,
      "--appendonly",
      "yes",
      "--appendfsync",
      "always",
      "--save",
      "",
    ],
    stdout: "null",
    stderr: "null",
  }).spawn();
  for (let i = 0; i < 200; i++) {
    try {
      (await Deno.connect({ hostname: "127.0.0.1", port })).close();
      return child;
    } catch {
      await new Promise((r) => setTimeout(r, 25));
    }
  }
  child.kill("SIGKILL");
  await child.status;
  throw new Error(`redis-server did not listen on port ${port}`);
}

async function stopRedis(child: Deno.ChildProcess): Promise<void> {
  try {
    child.kill("SIGTERM");
  } catch {
    // already gone
  }
  await child.status;
}

Deno.test("redisRateLimitStore() keeps limiting across a Redis restart, failing closed (or open) while it is down", async () => {
  const dir = await Deno.makeTempDir({ prefix: "fw_redis_" });
  const port = freePort();
  let redis = await startRedis(port, dir);
  const url = `redis://127.0.0.1:${port}`;
  const errors: unknown[] = [];
  const closed = redisRateLimitStore({ url, prefix: "fw:test:restart:" });
  const open = redisRateLimitStore({
    url,
    prefix: "fw:test:restart-open:",
    failOpen: true,
    onError: (e) => errors.push(e),
  });
  const t = await serve({
    "GET /closed": endpoint().rateLimit({ max: 3, windowMs: 600_000, store: closed })
      .handle(() => "ok"),
    "GET /open": endpoint().rateLimit({ max: 3, windowMs: 600_000, store: open })
      .handle(() => "ok"),
  });
  try {
    const status = async (path: string) => (await get(`${t.url}${path}`)).status;
    const before = [];
    for (let i = 0; i < 4; i++) before.push(await status("/closed"));
    assert.deepEqual(before, [200, 200, 200, 429]);
    for (let i = 0; i < 4; i++) await status("/open");
    assert.equal(await status("/open"), 429);

    await stopRedis(redis);
    // down: the default store fails closed (500), the failOpen one lets requests through
    assert.equal(await status("/closed"), 500);
    assert.equal(await status("/open"), 200);
    assert.ok(errors.length >= 1);

    redis = await startRedis(port, dir);
    // the client reconnects in the background; wait for it (bounded), then the kept count limits
    let after = 500;
    for (let i = 0; i < 100 && after === 500; i++) {
      after = await status("/closed");
      if (after === 500) await new Promise((r) => setTimeout(r, 100));
    }
    assert.equal(after, 429);
    let openAfter = 200;
    for (let i = 0; i < 100 && openAfter === 200; i++) {
      openAfter = await status("/open");
      if (openAfter === 200) await new Promise((r) => setTimeout(r, 100));
    }
    assert.equal(openAfter, 429);
  } finally {
    await t.stop();
    await closed.close();
    await open.close();
    await stopRedis(redis);
    await Deno.remove(dir, { recursive: true });
  }
});
