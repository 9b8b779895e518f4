import assert from "node:assert/strict";
import { endpoint } from "../endpoint.ts";
import { redisRateLimitStore } from "./redis_rate_limit.ts";
import { get, serve } from "../testdata/policy_app.ts";

const REDIS = "redis://127.0.0.1:6379";

Deno.test("redisRateLimitStore() lets two application instances share one limit", async () => {
  const prefix = `fw:test:${crypto.randomUUID()}:`;
  const storeA = redisRateLimitStore({ url: REDIS, prefix });
  const storeB = redisRateLimitStore({ url: REDIS, prefix });
  const route = (store: typeof storeA) =>
    endpoint().rateLimit({ max: 3, windowMs: 30_000, store }).handle(() => ({ ok: true }));
  const a = await serve({ "GET /shared": route(storeA) });
  const b = await serve({ "GET /shared": route(storeB) });
  try {
    const seen = [];
    for (const url of [a.url, b.url, a.url, b.url, a.url]) {
      const res = await get(`${url}/shared`);
      seen.push([res.status, res.headers.get("ratelimit-remaining")]);
    }
    assert.deepEqual(seen, [[200, "2"], [200, "1"], [200, "0"], [429, "0"], [429, "0"]]);
    const last = await get(`${b.url}/shared`);
    assert.equal(last.headers.get("ratelimit-limit"), "3");
    const reset = Number(last.headers.get("ratelimit-reset"));
    assert.ok(reset > 0 && reset <= 30, `reset ${reset}`);
    assert.equal(last.headers.get("retry-after"), String(reset));
  } finally {
    await a.stop();
    await b.stop();
    await storeA.close();
    await storeB.close();
  }
});

Deno.test("redisRateLimitStore() counts atomically under concurrent hits and opens a new window", async () => {
  const store = redisRateLimitStore({ url: REDIS, prefix: `fw:test:${crypto.randomUUID()}:` });
  try {
    const hits = await Promise.all(Array.from({ length: 50 }, () => store.hit("k", 300)));
    assert.deepEqual(
      hits.map((h) => h.count).sort((x, y) => x - y),
      Array.from({ length: 50 }, (_, i) => i + 1),
    );
    assert.ok(hits.every((h) => h.resetMs > 0 && h.resetMs <= 300));
    await new Promise((resolve) => setTimeout(resolve, 350));
    const next = await store.hit("k", 300);
    assert.equal(next.count, 1);
  } finally {
    await store.close();
  }
});

Deno.test("redisRateLimitStore() answers 500 when Redis cannot be reached", async () => {
  const store = redisRateLimitStore({ url: "redis://127.0.0.1:1", prefix: "fw:test:down:" });
  const t = await serve({
    "GET /down": endpoint().rateLimit({ max: 1, windowMs: 1000, store }).handle(() => "ok"),
  });
  try {
    const res = await get(`${t.url}/down`);
    assert.equal(res.status, 500);
    assert.ok(t.sink.records.some((r) => r.level === "error"));
  } finally {
    await t.stop();
    await store.close();
  }
});

Deno.test("redisRateLimitStore() rejects options without exactly one of client and url", () => {
  // deno-lint-ignore no-explicit-any
  assert.throws(() => redisRateLimitStore({} as any), /either "client" or "url"/);
  assert.throws(
    // deno-lint-ignore no-explicit-any
    () => redisRateLimitStore({ url: REDIS, client: { eval: () => Promise.resolve() } } as any),
    /either "client" or "url"/,
  );
});
