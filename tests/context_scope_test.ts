/**
 * The request's async context reaches handler code on every path the dispatcher takes: a
 * synchronous scope for validation, an async one opened only around code that may await (async
 * handlers, `.inject()` providers, the handler after the body is read), and the middleware path.
 */
import assert from "node:assert/strict";
import { api, application, endpoint } from "@fw/application";
import { type Plugin, provider, runInContext, tryContext, useContext } from "@fw/runtime";

const PARENT = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01";
const TRACE = "4bf92f3577b34da6a3ce929d0e0e4736";
const tick = () => new Promise((r) => setTimeout(r, 1));
const traceId = () => useContext<{ traceId: string }>().traceId;

function routes(seen: string[]) {
  const Traced = provider({
    name: "traced",
    lifetime: "scoped",
    factory: () => ({ trace: tryContext<{ traceId: string }>()?.traceId }),
  });
  return api({ autoScan: false })
    .route(
      "POST",
      "/async-body",
      endpoint().body({ name: String }).handle(async (ctx) => {
        const { name } = await ctx.body();
        await tick();
        seen.push(`async-body ${name} ${traceId()}`);
        return { trace: traceId() };
      }),
    )
    .route(
      "POST",
      "/sync-body",
      endpoint().body({ name: String }).handle(() => {
        seen.push(`sync-body ${traceId()}`);
        return "ok";
      }),
    )
    .route(
      "GET",
      "/async",
      endpoint().handle(async () => {
        await tick();
        seen.push(`async ${traceId()}`);
        return "ok";
      }),
    )
    .route(
      "POST",
      "/inject",
      endpoint().body({ name: String }).inject({ traced: Traced }).handle(
        async ({ traced }, ctx) => {
          await ctx.body();
          await tick();
          seen.push(`inject ${traced.trace} ${traceId()}`);
          return "ok";
        },
      ),
    )
    .route(
      "GET",
      "/later",
      endpoint().handle(async () => {
        const id = traceId();
        setTimeout(() => seen.push(`later ${id === traceId()}`), 5);
        await tick();
        return "ok";
      }),
    );
}

const post = (body: unknown) => ({
  method: "POST",
  headers: { "content-type": "application/json", traceparent: PARENT },
  body: JSON.stringify(body),
});

Deno.test("handlers see the request's trace id after awaits, with and without a body", async () => {
  const seen: string[] = [];
  const app = application().use(routes(seen));
  const res = await app.request("/async-body", post({ name: "a-long-enough-name" }));
  assert.equal(res.status, 200);
  assert.deepEqual(await res.json(), { trace: TRACE });
  assert.equal((await app.request("/sync-body", post({ name: "x" }))).status, 200);
  assert.equal((await app.request("/async", { headers: { traceparent: PARENT } })).status, 200);
  assert.equal((await app.request("/inject", post({ name: "ok" }))).status, 200);
  assert.deepEqual(seen, [
    `async-body a-long-enough-name ${TRACE}`,
    `sync-body ${TRACE}`,
    `async ${TRACE}`,
    `inject ${TRACE} ${TRACE}`,
  ]);
  await app.stop();
});

Deno.test("a trace id read during the request stays the same for work that outlives it", async () => {
  const seen: string[] = [];
  const app = application().use(routes(seen));
  assert.equal((await app.request("/later")).status, 200);
  await new Promise((r) => setTimeout(r, 20));
  assert.deepEqual(seen, ["later true"]);
  await app.stop();
});

Deno.test("with a middleware, handlers see the middleware's values and the trace id", async () => {
  const seen: string[] = [];
  const tenant: Plugin = {
    name: "tenant",
    setup: (ctx) =>
      ctx.addMiddleware((_req, _info, next) => runInContext({ tenant: "acme" }, () => next())),
  };
  const app = application().use(tenant).use(
    api({ autoScan: false }).route(
      "POST",
      "/t",
      endpoint().body({ name: String }).handle(async () => {
        await tick();
        seen.push(`${useContext<{ tenant: string }>().tenant} ${traceId()}`);
        return "ok";
      }),
    ),
  );
  assert.equal((await app.request("/t", post({ name: "some name here" }))).status, 200);
  assert.deepEqual(seen, [`acme ${TRACE}`]);
  await app.stop();
});

Deno.test("the request leaves its context once the response is ready", async () => {
  const scopes: Record<string, unknown>[] = [];
  const capture = async () => {
    await tick();
    const values = useContext();
    scopes.push(values);
    return {
      trace: (values as { traceId: string }).traceId,
      hasRequest: values.request !== undefined,
    };
  };
  // a store that answers with a promise makes the route's policies await: the dispatcher then
  // opens the async context itself, and the endpoint still releases the request
  const asyncStore = { hit: () => Promise.resolve({ count: 1, resetMs: 1000 }) };
  const app = application().use(
    api({ autoScan: false })
      .route("GET", "/a", endpoint(capture))
      .route("POST", "/b", endpoint().body({ name: String }).handle(capture))
      .route(
        "GET",
        "/c",
        endpoint().rateLimit({ max: 5, windowMs: 1000, store: asyncStore }).handle(capture),
      ),
  );
  const a = await app.request("/a", { headers: { traceparent: PARENT } });
  assert.deepEqual(await a.json(), { trace: TRACE, hasRequest: true });
  const b = await app.request("/b", post({ name: "a-long-enough-name" }));
  assert.deepEqual(await b.json(), { trace: TRACE, hasRequest: true });
  const c = await app.request("/c", { headers: { traceparent: PARENT } });
  assert.equal(c.headers.get("ratelimit-remaining"), "4");
  assert.deepEqual(await c.json(), { trace: TRACE, hasRequest: true });
  assert.equal(scopes.length, 3);
  for (const values of scopes) {
    assert.equal(values.request, undefined);
    assert.equal(values.traceId, TRACE);
  }
  await app.stop();
});

Deno.test("a request dispatched inside another scope starts from an empty one (keep-alive behind a proxy)", async () => {
  // Deno can resume a connection's next request inside the frame the previous response left
  // behind: that request must neither fail nor see the other request's user or trace id.
  const who = (c: Record<string, unknown>) => ({
    user: c.user ?? null,
    outerTrace: c.traceId === "outer",
  });
  const routes = () =>
    api({ autoScan: false })
      .route(
        "GET",
        "/async",
        endpoint().handle(async () => {
          await tick();
          return who(useContext());
        }),
      )
      .route("GET", "/sync", endpoint().handle(() => who(useContext())));
  const passThrough: Plugin = {
    name: "passThrough",
    setup: (ctx) => ctx.addMiddleware((_req, _info, next) => next()),
  };
  for (const app of [application().use(routes()), application().use(passThrough).use(routes())]) {
    for (const path of ["/async", "/sync"]) {
      const res = await runInContext(
        { traceId: "outer", user: "ann" },
        () => app.request(path, { headers: { traceparent: PARENT } }),
      );
      assert.equal(res.status, 200, path);
      assert.deepEqual(await res.json(), { user: null, outerTrace: false }, path);
    }
    await app.stop();
  }
});
