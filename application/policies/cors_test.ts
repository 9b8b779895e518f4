import assert from "node:assert/strict";
import { Int } from "@fw/runtime";
import { checkCorsOptions } from "./cors.ts";
import { endpoint } from "../endpoint.ts";
import { get, makeApp, serve } from "../testdata/policy_app.ts";

const APP = "https://app.example";
const EVIL = "https://evil.example";

const listRoute = endpoint()
  .cors({ origin: [APP, "https://admin.example"], exposeHeaders: ["X-Total"], maxAge: 120 })
  .handle(() => ({ items: [] }));

Deno.test("cors() reflects an allowed origin from a list, with Vary and exposed headers", async () => {
  const t = await serve({ "GET /items": listRoute, "POST /items": listRoute });
  try {
    const ok = await get(`${t.url}/items`, { headers: { origin: APP } });
    assert.equal(ok.status, 200);
    assert.equal(ok.headers.get("access-control-allow-origin"), APP);
    assert.equal(ok.headers.get("access-control-expose-headers"), "X-Total");
    assert.equal(ok.headers.get("vary"), "Origin");
    assert.equal(ok.headers.get("access-control-allow-credentials"), null);

    const evil = await get(`${t.url}/items`, { headers: { origin: EVIL } });
    assert.equal(evil.status, 200);
    assert.equal(evil.headers.get("access-control-allow-origin"), null);
    assert.equal(evil.headers.get("access-control-expose-headers"), null);
    assert.equal(evil.headers.get("vary"), "Origin");
  } finally {
    await t.stop();
  }
});

Deno.test("cors() preflight answers 204 with methods, headers and max age", async () => {
  const plain = endpoint().handle(() => "no cors");
  const t = await serve({
    "GET /items": listRoute,
    "POST /items": listRoute,
    "DELETE /items": plain,
  });
  try {
    const pre = await get(`${t.url}/items`, {
      method: "OPTIONS",
      headers: {
        origin: APP,
        "access-control-request-method": "POST",
        "access-control-request-headers": "content-type, x-trace",
      },
    });
    assert.equal(pre.status, 204);
    assert.equal(pre.headers.get("access-control-allow-origin"), APP);
    assert.equal(pre.headers.get("access-control-allow-methods"), "GET, HEAD, POST");
    assert.equal(pre.headers.get("access-control-allow-headers"), "content-type, x-trace");
    assert.equal(pre.headers.get("access-control-max-age"), "120");
    assert.match(pre.headers.get("vary")!, /Origin/);

    const evil = await get(`${t.url}/items`, {
      method: "OPTIONS",
      headers: { origin: EVIL, "access-control-request-method": "POST" },
    });
    assert.equal(evil.status, 204);
    assert.equal(evil.headers.get("access-control-allow-origin"), null);
    assert.equal(evil.headers.get("access-control-allow-methods"), null);

    // the method asked for has no CORS: a plain OPTIONS answer, nothing allowed
    const noCors = await get(`${t.url}/items`, {
      method: "OPTIONS",
      headers: { origin: APP, "access-control-request-method": "DELETE" },
    });
    assert.equal(noCors.status, 204);
    assert.equal(noCors.headers.get("allow"), "DELETE, GET, HEAD, OPTIONS, POST");
    assert.equal(noCors.headers.get("access-control-allow-origin"), null);
  } finally {
    await t.stop();
  }
});

Deno.test("cors() with origin * or one origin answers it without Vary, with credentials", async () => {
  const { app } = makeApp({
    "GET /public": endpoint().cors().handle(() => "hi"),
    "GET /session": endpoint().cors({ origin: APP, credentials: true }).handle(() => "hi"),
  });
  const pub = await app.request("/public", { headers: { origin: EVIL } });
  assert.equal(pub.headers.get("access-control-allow-origin"), "*");
  assert.equal(pub.headers.get("vary"), null);
  await pub.body?.cancel();

  const session = await app.request("/session", { headers: { origin: APP } });
  assert.equal(session.headers.get("access-control-allow-origin"), APP);
  assert.equal(session.headers.get("access-control-allow-credentials"), "true");
  await session.body?.cancel();

  // one configured origin: the same answer for everyone, the requester's origin never echoed
  const other = await app.request("/session", { headers: { origin: EVIL } });
  assert.equal(other.headers.get("access-control-allow-origin"), APP);
  assert.equal(other.headers.get("vary"), null);
  await other.body?.cancel();

  const pre = await app.request("/session", {
    method: "OPTIONS",
    headers: { origin: APP, "access-control-request-method": "GET" },
  });
  assert.equal(pre.status, 204);
  assert.equal(pre.headers.get("access-control-allow-credentials"), "true");
  assert.equal(pre.headers.get("access-control-max-age"), "600");
});

Deno.test("cors() with an origin function never reflects a refused origin", async () => {
  const seen: string[] = [];
  const { app } = makeApp({
    "GET /fn": endpoint()
      .cors({ origin: (o) => (seen.push(o), o.endsWith(".trusted.example")) })
      .handle(() => "hi"),
  });
  const ok = await app.request("/fn", { headers: { origin: "https://a.trusted.example" } });
  assert.equal(ok.headers.get("access-control-allow-origin"), "https://a.trusted.example");
  await ok.body?.cancel();
  const bad = await app.request("/fn", { headers: { origin: "https://trusted.example.evil" } });
  assert.equal(bad.headers.get("access-control-allow-origin"), null);
  assert.equal(bad.headers.get("vary"), "Origin");
  await bad.body?.cancel();
  assert.deepEqual(seen, ["https://a.trusted.example", "https://trusted.example.evil"]);
});

Deno.test("cors() headers are on error responses too", async () => {
  const { app } = makeApp({
    "GET /users/:id": endpoint().params({ id: Int }).cors({ origin: APP }).handle((c) => c.params),
  });
  const res = await app.request("/users/x", { headers: { origin: APP } });
  assert.equal(res.status, 400);
  assert.equal(res.headers.get("access-control-allow-origin"), APP);
  await res.body?.cancel();
});

Deno.test("cors() copies a response whose headers are immutable", async () => {
  const upstream = await serve({ "GET /up": endpoint().handle(() => "upstream") });
  const { app } = makeApp({
    "GET /proxy": endpoint().cors({ origin: APP }).handle(() => fetch(`${upstream.url}/up`)),
  });
  try {
    const res = await app.request("/proxy", { headers: { origin: APP } });
    assert.equal(res.headers.get("access-control-allow-origin"), APP);
    assert.equal(await res.text(), "upstream");
  } finally {
    await upstream.stop();
  }
});

Deno.test("endpoint().cors() rejects configuration mistakes at start-up", () => {
  assert.throws(() => endpoint().cors({ origin: "*", credentials: true }), /credentials/);
  assert.throws(() => endpoint().cors({ origin: "https://app.example/" }), /not an origin/);
  assert.throws(() => endpoint().cors({ origin: "app.example" }), /not an origin/);
  assert.throws(() => endpoint().cors({ origin: [] }), /empty list/);
  assert.throws(() => endpoint().cors({ origin: ["*", APP] }), /cannot contain "\*"/);
  assert.throws(() => endpoint().cors({ maxAge: -1 }), /"maxAge"/);
  assert.throws(() => endpoint().cors({ exposeHeaders: ["bad header"] }), /"exposeHeaders"/);
  // deno-lint-ignore no-explicit-any
  assert.throws(() => endpoint().cors({ orgin: APP } as any), /unknown option "orgin"/);
  // deno-lint-ignore no-explicit-any
  assert.throws(() => endpoint().cors({ origin: 42 } as any), /"origin" must be/);
  assert.deepEqual(checkCorsOptions({ origin: APP }), { origin: APP });
});
