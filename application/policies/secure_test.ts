import assert from "node:assert/strict";
import { type AuthUser, ForbiddenException, Int, useContext } from "@fw/runtime";
import { endpoint } from "../endpoint.ts";
import { oauth } from "./oauth.ts";
import { signJwt } from "../testdata/jwt.ts";
import { get, makeApp, type Routes, serve } from "../testdata/policy_app.ts";

const SECRET = "test-secret-with-at-least-32-bytes!";
const ISS = "https://id.example";
const AUD = "orders-api";
const auth = () => oauth({ issuer: ISS, audience: AUD, secret: SECRET });

function token(claims: Record<string, unknown> = {}): Promise<string> {
  const now = Math.floor(Date.now() / 1000);
  return signJwt(
    { iss: ISS, aud: AUD, sub: "user-1", iat: now, exp: now + 3600, ...claims },
    { alg: "HS256", secret: SECRET },
  );
}

const bearer = (t: string) => ({ headers: { authorization: `Bearer ${t}` } });

const routes: Routes = {
  "GET /me": endpoint().secure().handle(() => {
    const user = useContext<{ user: AuthUser }>().user;
    return { sub: user.sub, email: user.email, azp: user.azp, client_id: user.client_id };
  }),
  "GET /async-me": endpoint().secure().handle(async () => {
    await new Promise((r) => setTimeout(r, 1));
    const ctx = useContext<{ user: AuthUser; traceId: string }>();
    return { sub: ctx.user.sub, traced: typeof ctx.traceId === "string" };
  }),
  "POST /orders": endpoint().secure({ scopes: ["orders:write"] }).handle(() => ({ ok: true })),
  "DELETE /orders/:id": endpoint()
    .params({ id: Int })
    .secure({ roles: ["admin"] })
    .handle((c) => ({ deleted: c.params.id })),
  "GET /public": endpoint().handle(() => ({
    user: useContext<{ user?: AuthUser }>().user?.sub ?? null,
  })),
};

Deno.test(".secure() answers 401 with WWW-Authenticate: Bearer without a token", async () => {
  const t = await serve(routes, { plugins: [auth()] });
  try {
    const res = await get(`${t.url}/me`);
    assert.equal(res.status, 401);
    assert.equal(res.headers.get("www-authenticate"), "Bearer");
    assert.deepEqual(JSON.parse(res.body), {
      statusCode: 401,
      message: "Authentication required",
      error: "Unauthorized",
    });
    const basic = await get(`${t.url}/me`, { headers: { authorization: "Basic dTpw" } });
    assert.equal(basic.status, 401);
  } finally {
    await t.stop();
  }
});

Deno.test(".secure() lets a verified token through and puts the user in the context", async () => {
  const t = await serve(routes, { plugins: [auth()] });
  try {
    const jwt = await token({ email: "ann@example.com", azp: "web", client_id: "web-app" });
    const res = await get(`${t.url}/me`, bearer(jwt));
    assert.equal(res.status, 200);
    assert.deepEqual(JSON.parse(res.body), {
      sub: "user-1",
      email: "ann@example.com",
      azp: "web",
      client_id: "web-app",
    });
    const again = await get(`${t.url}/async-me`, bearer(jwt));
    assert.deepEqual(JSON.parse(again.body), { sub: "user-1", traced: true });
  } finally {
    await t.stop();
  }
});

Deno.test(".secure({ scopes }) answers 403 with insufficient_scope when a scope is missing", async () => {
  const { app } = makeApp(routes, { plugins: [auth()] });
  const read = await app.request("/orders", {
    method: "POST",
    ...bearer(await token({ scope: "orders:read profile" })),
  });
  assert.equal(read.status, 403);
  assert.equal(
    read.headers.get("www-authenticate"),
    'Bearer error="insufficient_scope", scope="orders:write"',
  );
  assert.deepEqual(await read.json(), {
    statusCode: 403,
    message: 'Missing scope "orders:write"',
    error: "Forbidden",
  });
  const write = await app.request("/orders", {
    method: "POST",
    ...bearer(await token({ scope: "orders:read orders:write" })),
  });
  assert.equal(write.status, 200);
  await write.body?.cancel();
  const scp = await app.request("/orders", {
    method: "POST",
    ...bearer(await token({ scp: ["orders:write"] })),
  });
  assert.equal(scp.status, 200);
  await scp.body?.cancel();
});

Deno.test(".secure({ roles }) answers 403 without the role, and checks before validation", async () => {
  const { app } = makeApp(routes, { plugins: [auth()] });
  const user = await app.request("/orders/x", {
    method: "DELETE",
    ...bearer(await token({ roles: ["user"] })),
  });
  assert.equal(user.status, 403);
  assert.equal((await user.json()).message, 'Missing role "admin"');
  const anonymous = await app.request("/orders/x", { method: "DELETE" });
  assert.equal(anonymous.status, 401);
  await anonymous.body?.cancel();
  const admin = await app.request("/orders/7", {
    method: "DELETE",
    ...bearer(await token({ roles: ["user", "admin"] })),
  });
  assert.deepEqual(await admin.json(), { deleted: 7 });
});

Deno.test(".secure(guard) answers 403 when the guard says no, and its errors as usual", async () => {
  const calls: string[] = [];
  const { app, sink } = makeApp({
    "GET /docs/:owner": endpoint().secure((user, ctx) => {
      calls.push(`${user.sub}:${(ctx.params as { owner: string }).owner}`);
      return user.sub === (ctx.params as { owner: string }).owner;
    }).handle(() => "mine"),
    "GET /async-guard": endpoint().secure(async (user) => {
      await Promise.resolve();
      return user.roles.includes("auditor");
    }).handle(() => "audited"),
    "GET /throwing/:kind": endpoint().secure((_user, ctx) => {
      if ((ctx.params as { kind: string }).kind === "http") {
        throw new ForbiddenException("Account suspended");
      }
      throw new Error("guard bug");
    }).handle(() => "never"),
  }, { plugins: [auth()] });
  const jwt = bearer(await token());
  const own = await app.request("/docs/user-1", jwt);
  assert.equal(own.status, 200);
  assert.equal(await own.text(), "mine");
  const other = await app.request("/docs/user-2", jwt);
  assert.equal(other.status, 403);
  assert.equal((await other.json()).message, "Access denied");
  assert.deepEqual(calls, ["user-1:user-1", "user-1:user-2"]);

  const noAudit = await app.request("/async-guard", jwt);
  assert.equal(noAudit.status, 403);
  await noAudit.body?.cancel();
  const audit = await app.request("/async-guard", bearer(await token({ roles: ["auditor"] })));
  assert.equal(await audit.text(), "audited");

  const suspended = await app.request("/throwing/http", jwt);
  assert.equal(suspended.status, 403);
  assert.equal((await suspended.json()).message, "Account suspended");
  const bug = await app.request("/throwing/bug", jwt);
  assert.equal(bug.status, 500);
  await bug.body?.cancel();
  assert.ok(sink.records.some((r) => r.level === "error" && /Unhandled error/.test(r.message)));
});

Deno.test("oauth() never refuses a public route because of a bad token", async () => {
  const { app } = makeApp(routes, { plugins: [auth()] });
  const bad = await app.request("/public", bearer("not.a.token"));
  assert.equal(bad.status, 200);
  assert.deepEqual(await bad.json(), { user: null });
  const good = await app.request("/public", bearer(await token()));
  assert.deepEqual(await good.json(), { user: "user-1" });
});

Deno.test(".secure() without oauth() refuses every request with 401", async () => {
  const { app } = makeApp(routes);
  const res = await app.request("/me", bearer(await token()));
  assert.equal(res.status, 401);
  await res.body?.cancel();
});

Deno.test("endpoint().secure() rejects configuration mistakes at start-up", () => {
  // deno-lint-ignore no-explicit-any
  assert.throws(() => endpoint().secure({ scope: ["a"] } as any), /unknown option "scope"/);
  // deno-lint-ignore no-explicit-any
  assert.throws(() => endpoint().secure({ roles: "admin" } as any), /"roles"/);
  // deno-lint-ignore no-explicit-any
  assert.throws(() => endpoint().secure(42 as any), /guard function/);
});

Deno.test("oauth() sets user before other middlewares run, and the handler still sees it", async () => {
  const seen: (string | undefined)[] = [];
  const spy = {
    name: "spy",
    setup(ctx: import("@fw/runtime").AppContext) {
      ctx.addMiddleware((_req, _info, next) => {
        const values = useContext<{ user?: AuthUser; traceId: string }>();
        seen.push(`${values.user?.sub}:${typeof values.traceId}`);
        return next();
      });
    },
  };
  const t = await serve(routes, { plugins: [spy, auth()] });
  try {
    const jwt = await token();
    const res = await get(`${t.url}/me`, bearer(jwt));
    assert.equal(res.status, 200);
    assert.equal(JSON.parse(res.body).sub, "user-1");
    const anonymous = await get(`${t.url}/me`);
    assert.equal(anonymous.status, 401);
    assert.deepEqual(seen, ["user-1:string", "undefined:string"]);
  } finally {
    await t.stop();
  }
});
