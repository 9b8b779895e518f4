/**
 * The servers `scripts/bench_http.ts` drives: bare `Deno.serve`, Hono and fw with equivalent
 * routes. Run as `deno run -A scripts/_bench_servers.ts <kind> <port> [routes]`, kind one of
 * `bare`, `hono`, `fw`, and for scenario (e) `fw-policies` (fw with `.cors()` and `.secure()` on
 * `GET /users/:id`, tokens verified by `oauth()`), `hono-policies` (Hono's `cors()` and `jwt()`
 * middlewares on the same route) and `bare-cors` (bare plus the one CORS response header, which
 * measures what a second response header costs in `Deno.serve` itself), and for scenario (f)
 * `fw-traced` (fw with `telemetry()` tracing every request: an always-on sampler and a batching
 * exporter, see `_bench_tracing.ts`) beside `fw+sdk` (untraced fw whose handler makes the same
 * request span straight through the SDK: the floor any instrumentation on that SDK pays), and for
 * scenario (g) `fw-dashboard` (fw with `dashboard()` installed and no page open) and
 * `fw-middleware` (fw with one middleware that does nothing: what any middleware costs).
 *
 * @module
 */

import { Hono } from "hono";
import { cors } from "hono/cors";
import { jwt } from "hono/jwt";
import {
  api,
  application,
  ArrayOf,
  DateIso,
  endpoint,
  type EndpointBuilder,
  http,
  Int,
  Max,
  Min,
  MinLength,
  Optional,
  Uuid,
} from "@fw/application";
import { oauth } from "@fw/application/oauth";
import { telemetry } from "@fw/application/telemetry";
import { createLogger } from "@fw/runtime";
import { BENCH_AUDIENCE, BENCH_ISSUER, BENCH_ORIGIN, BENCH_SECRET } from "./_bench_auth.ts";
import { benchTracerProvider, sdkRequestSpan } from "./_bench_tracing.ts";

const [kind, portArg, routesArg] = Deno.args;
const port = Number(portArg);
const extra = Math.max(0, Number(routesArg ?? 3) - 3);
const ready = () => console.log("ready");

if (kind === "bare" || kind === "bare-cors") {
  const cors = kind === "bare-cors";
  const others = new Set(Array.from({ length: extra }, (_, i) => `r${i}`));
  Deno.serve({ port, hostname: "127.0.0.1", onListen: ready }, async (req) => {
    const url = new URL(req.url);
    const parts = url.pathname.split("/");
    if (url.pathname === "/" && req.method === "GET") return new Response("Hello, world");
    if (parts[1] === "users" && parts.length === 3 && req.method === "GET") {
      const id = Number(parts[2]);
      const limit = Number(url.searchParams.get("limit"));
      const res = Response.json({ id, limit });
      if (cors) res.headers.set("access-control-allow-origin", BENCH_ORIGIN);
      return res;
    }
    if (url.pathname === "/orders" && req.method === "POST") {
      const order = await req.json();
      return Response.json({ id: order.id, status: "accepted", items: order.items.length }, {
        status: 201,
      });
    }
    if (others.has(parts[1])) return Response.json({ id: parts[2] });
    return new Response("Not Found", { status: 404 });
  });
} else if (kind === "hono" || kind === "hono-policies") {
  const app = new Hono();
  if (kind === "hono-policies") {
    app.use("/users/*", cors({ origin: BENCH_ORIGIN }));
    app.use("/users/*", jwt({ secret: BENCH_SECRET, alg: "HS256" }));
  }
  app.get("/", (c) => c.text("Hello, world"));
  app.get(
    "/users/:id",
    (c) => c.json({ id: Number(c.req.param("id")), limit: Number(c.req.query("limit")) }),
  );
  app.post("/orders", async (c) => {
    const order = await c.req.json();
    return c.json({ id: order.id, status: "accepted", items: order.items.length }, 201);
  });
  for (let i = 0; i < extra; i++) app.get(`/r${i}/:id`, (c) => c.json({ id: c.req.param("id") }));
  Deno.serve({ port, hostname: "127.0.0.1", onListen: ready }, app.fetch);
} else if (
  kind === "fw" || kind === "fw-policies" || kind === "fw-traced" || kind === "fw+sdk" ||
  kind === "fw-dashboard" || kind === "fw-middleware"
) {
  const policies = kind === "fw-policies";
  // fw+sdk: untraced fw whose handler makes the request's span straight through the SDK
  const handSpan = kind === "fw+sdk" ? sdkRequestSpan(benchTracerProvider()) : undefined;
  const users = policies
    ? (endpoint().cors({ origin: BENCH_ORIGIN }).secure() as EndpointBuilder)
    : endpoint();
  const routes = api({ autoScan: false })
    .route("GET", "/", endpoint(() => "Hello, world"))
    .route(
      "GET",
      "/users/:id",
      users
        .params({ id: Int })
        .query({ limit: Max(100, Min(1, Int)) })
        .returns({ id: Int, limit: Int })
        .handle((ctx) => {
          handSpan?.(ctx.req);
          return { id: ctx.params.id, limit: ctx.queryParams().limit };
        }),
    )
    .route(
      "POST",
      "/orders",
      endpoint()
        .body({
          id: Uuid,
          customer: MinLength(1),
          items: ArrayOf({ sku: MinLength(1), qty: Min(1, Int) }),
          total: Min(0),
          currency: MinLength(3),
          note: Optional(String),
          placedAt: DateIso,
        })
        .returns(201, "Accepted", { id: Uuid, status: String, items: Int })
        .handle(async (ctx) => {
          const order = await ctx.body();
          return { id: order.id, status: "accepted", items: order.items.length };
        }),
    );
  for (let i = 0; i < extra; i++) {
    routes.route(
      "GET",
      `/r${i}/:id`,
      endpoint().params({ id: String }).handle((ctx) => ({ id: ctx.params.id })),
    );
  }
  const app = application({ logger: createLogger({ level: "warn" }) })
    .use(http({ port, hostname: "127.0.0.1", signals: false }));
  if (kind === "fw-traced") {
    app.use(telemetry({ tracerProvider: benchTracerProvider(), http: false }));
  }
  if (policies) {
    app.use(oauth({ issuer: BENCH_ISSUER, audience: BENCH_AUDIENCE, secret: BENCH_SECRET }));
  }
  if (kind === "fw-middleware") {
    // the reference for (g): one middleware that does nothing
    app.use({ name: "noop", setup: (ctx) => ctx.addMiddleware((_req, _info, next) => next()) });
  }
  if (kind === "fw-dashboard") {
    // installed, guarded, and no page open: its middleware counts every request
    const { dashboard } = await import("@fw/dashboard");
    app.use(dashboard({ secure: { roles: ["admin"] } }));
  }
  app.use(routes);
  await app.start();
  ready();
} else {
  console.error(`unknown server kind "${kind}"`);
  Deno.exit(2);
}
