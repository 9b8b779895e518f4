import assert from "node:assert/strict";
import { ManualClock } from "@fw/runtime";
import { endpoint } from "../endpoint.ts";
import { MemoryRateLimitStore } from "./rate_limit_store.ts";
import { get, makeApp, serve } from "../testdata/policy_app.ts";

const limited = endpoint().rateLimit({ max: 2, windowMs: 10_000 }).handle(() => ({ ok: true }));

function headers(res: { headers: Headers }) {
  return {
    limit: res.headers.get("ratelimit-limit"),
    remaining: res.headers.get("ratelimit-remaining"),
    reset: res.headers.get("ratelimit-reset"),
    retry: res.headers.get("retry-after"),
  };
}

Deno.test("rateLimit() answers 429 with Retry-After and RateLimit headers over a socket", async () => {
  const clock = new ManualClock(1_000_000);
  const t = await serve({ "GET /limited": limited }, { clock });
  try {
    const a = await get(`${t.url}/limited`);
    assert.equal(a.status, 200);
    assert.deepEqual(headers(a), { limit: "2", remaining: "1", reset: "10", retry: null });
    await clock.advance(2_500);
    const b = await get(`${t.url}/limited`);
    assert.equal(b.status, 200);
    assert.deepEqual(headers(b), { limit: "2", remaining: "0", reset: "8", retry: null });
    const c = await get(`${t.url}/limited`);
    assert.equal(c.status, 429);
    assert.deepEqual(headers(c), { limit: "2", remaining: "0", reset: "8", retry: "8" });
    assert.deepEqual(JSON.parse(c.body), {
      statusCode: 429,
      message: "Rate limit exceeded: at most 2 requests per 10000 ms; retry in 8 s",
      error: "Too Many Requests",
    });
    await clock.advance(7_500);
    const d = await get(`${t.url}/limited`);
    assert.equal(d.status, 200);
    assert.deepEqual(headers(d), { limit: "2", remaining: "1", reset: "10", retry: null });
  } finally {
    await t.stop();
  }
});

Deno.test("rateLimit() counts each peer address and each route on its own", async () => {
  const { app } = makeApp({ "GET /a": limited, "GET /b": limited });
  const from = (ip: string, path = "/a") =>
    app.fetch(new Request(`http://localhost${path}`), {
      remoteAddr: { hostname: ip, port: 1 },
    }).then(async (r) => (await r.body?.cancel(), r.status));
  assert.deepEqual([await from("10.0.0.1"), await from("10.0.0.1"), await from("10.0.0.1")], [
    200,
    200,
    429,
  ]);
  assert.equal(await from("10.0.0.2"), 200);
  assert.equal(await from("10.0.0.1", "/b"), 200);
});

Deno.test("rateLimit() ignores X-Forwarded-For unless http({ trustProxy }) is set", async () => {
  const spoof = (n: number) => ({ headers: { "x-forwarded-for": `203.0.113.${n}` } });
  const plain = await serve({ "GET /limited": limited });
  try {
    const statuses = [];
    for (let n = 0; n < 3; n++) statuses.push((await get(`${plain.url}/limited`, spoof(n))).status);
    assert.deepEqual(statuses, [200, 200, 429]);
  } finally {
    await plain.stop();
  }
  const proxied = await serve({ "GET /limited": limited }, { http: { trustProxy: true } });
  try {
    const statuses = [];
    for (let n = 0; n < 3; n++) {
      statuses.push((await get(`${proxied.url}/limited`, spoof(n))).status);
    }
    assert.deepEqual(statuses, [200, 200, 200]);
    // only the last entry (the one the proxy appended) counts, not what the client prepended
    const chain = (n: number) => ({
      headers: { "x-forwarded-for": `10.9.9.${n}, 198.51.100.7` },
    });
    const more = [];
    for (let n = 0; n < 3; n++) more.push((await get(`${proxied.url}/limited`, chain(n))).status);
    assert.deepEqual(more, [200, 200, 429]);
  } finally {
    await proxied.stop();
  }
});

Deno.test("rateLimit() key option groups requests by a custom key", async () => {
  const byKey = endpoint()
    .rateLimit({ max: 1, windowMs: 1000, key: (req) => req.headers.get("x-api-key") ?? "anon" })
    .handle(() => "ok");
  const { app } = makeApp({ "GET /k": byKey });
  const call = (key: string) =>
    app.request("/k", { headers: { "x-api-key": key } }).then(async (r) => (
      await r.body?.cancel(), r.status
    ));
  assert.deepEqual([await call("a"), await call("b"), await call("a")], [200, 200, 429]);
});

Deno.test("rateLimit() with a shared store limits two applications together", async () => {
  const clock = new ManualClock(0);
  const store = new MemoryRateLimitStore({ clock });
  const route = endpoint().rateLimit({ max: 3, windowMs: 1000, store }).handle(() => "ok");
  const one = makeApp({ "GET /x": route }, { clock }).app;
  const two = makeApp({ "GET /x": route }, { clock }).app;
  const statuses = [];
  for (const app of [one, two, one, two]) {
    const res = await app.request("/x");
    await res.body?.cancel();
    statuses.push(res.status);
  }
  assert.deepEqual(statuses, [200, 200, 200, 429]);
});

Deno.test("MemoryRateLimitStore stays bounded and evicts expired windows", async () => {
  const clock = new ManualClock(0);
  const store = new MemoryRateLimitStore({ clock, maxKeys: 100 });
  for (let i = 0; i < 1000; i++) store.hit(`k${i}`, 1000);
  assert.equal(store.size, 100);
  assert.equal(store.hit("k999", 1000).count, 2); // the newest windows are kept
  await clock.advance(1000);
  for (let i = 0; i < 20; i++) store.hit(`n${i}`, 1000);
  assert.ok(store.size <= 100);
  assert.ok(store.size < 100, `expired windows are evicted, size ${store.size}`);
  assert.equal(store.hit("k999", 1000).count, 1); // its window expired
});

Deno.test("endpoint().rateLimit() rejects configuration mistakes at start-up", () => {
  assert.throws(() => endpoint().rateLimit({ max: 0, windowMs: 1000 }), /"max"/);
  assert.throws(() => endpoint().rateLimit({ max: 1.5, windowMs: 1000 }), /"max"/);
  assert.throws(() => endpoint().rateLimit({ max: 1, windowMs: 0 }), /"windowMs"/);
  assert.throws(
    // deno-lint-ignore no-explicit-any
    () => endpoint().rateLimit({ max: 1, windowMs: 1000, store: {} as any }),
    /"store"/,
  );
  assert.throws(
    // deno-lint-ignore no-explicit-any
    () => endpoint().rateLimit({ max: 1, windowMs: 1000, window: 5 } as any),
    /unknown option "window"/,
  );
  assert.throws(() => new MemoryRateLimitStore({ maxKeys: 0 }), /"maxKeys"/);
});
