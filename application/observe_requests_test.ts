import assert from "node:assert/strict";
import { createLogger } from "@fw/runtime";
import { application } from "./application.ts";

Deno.test("observeRequests(): every routed request is seen with its method and route pattern, and the status when asked", async () => {
  const seen: string[] = [];
  // silent: the failing handler's error is logged otherwise
  const app = application({ logger: createLogger({ level: "silent" }) }).use({
    name: "observer",
    setup(ctx) {
      ctx.observeRequests!((method, route) => {
        seen.push(`${method} ${route ?? "(none)"}`);
        // only ask for the outcome of POSTs
        return method === "POST" ? (status) => seen.push(`-> ${status}`) : undefined;
      });
    },
    warmup(ctx) {
      ctx.addRoute({
        method: "GET",
        path: "/users/:id",
        handler: (_req, p) => new Response(`user ${p.id}`),
      });
      ctx.addRoute({
        method: "POST",
        path: "/later",
        handler: () => Promise.resolve(new Response("later", { status: 202 })),
      });
      ctx.addRoute({
        method: "POST",
        path: "/fails",
        handler: () => Promise.reject(new Error("boom")),
      });
    },
  });
  assert.equal(await (await app.request("/users/7")).text(), "user 7");
  assert.equal((await app.request("/later", { method: "POST" })).status, 202);
  const failed = await app.request("/fails", { method: "POST" }).then((r) => r.status, () => 500);
  assert.equal(failed, 500);
  assert.equal((await app.request("/nope", { method: "POST" })).status, 404);
  assert.equal((await app.request("/users/%zz")).status, 400);
  const head = await app.request("/users/8", { method: "HEAD" });
  assert.equal(head.status, 200);
  assert.equal(await head.text(), "");
  assert.deepEqual(seen, [
    "GET /users/:id",
    "POST /later",
    "-> 202",
    "POST /fails",
    "-> 500",
    "POST (none)",
    "-> 404",
    "GET /users/:id",
    "HEAD /users/:id",
  ]);
});

Deno.test("observeRequests(): several observers and a middleware each see the request once", async () => {
  const seen: string[] = [];
  const app = application().use({
    name: "observers",
    setup(ctx) {
      ctx.addMiddleware(async (_req, _info, next) => {
        seen.push("middleware");
        return await next();
      });
      ctx.observeRequests!((_m, route) => {
        seen.push(`a ${route}`);
        return (status) => seen.push(`a ${status}`);
      });
      ctx.observeRequests!((_m, route) => {
        seen.push(`b ${route}`);
        return undefined;
      });
    },
    warmup(ctx) {
      ctx.addRoute({ method: "GET", path: "/", handler: () => new Response("ok") });
    },
  });
  assert.equal(await (await app.request("/")).text(), "ok");
  assert.deepEqual(seen, ["middleware", "a /", "b /", "a 200"]);
});

Deno.test("observeRequests() after start() is refused", async () => {
  let late: (() => void) | undefined;
  const app = application().use({
    name: "late",
    setup(ctx) {
      late = () => ctx.observeRequests!(() => undefined);
    },
  });
  await app.start();
  assert.throws(() => late!(), /Cannot observe requests after start\(\)/);
  await app.stop();
});
