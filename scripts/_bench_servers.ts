/**
 * The servers `scripts/bench_http.ts` drives: bare `Deno.serve`, Hono and fw with equivalent
 * routes. Run as `deno run -A scripts/_bench_servers.ts <bare|hono|fw> <port> [routes]`.
 *
 * @module
 */

import { Hono } from "hono";
import {
  api,
  application,
  ArrayOf,
  DateIso,
  endpoint,
  http,
  Int,
  Max,
  Min,
  MinLength,
  Optional,
  Uuid,
} from "@fw/application";
import { createLogger } from "@fw/runtime";

const [kind, portArg, routesArg] = Deno.args;
const port = Number(portArg);
const extra = Math.max(0, Number(routesArg ?? 3) - 3);
const ready = () => console.log("ready");

if (kind === "bare") {
  const others = new Set(Array.from({ length: extra }, (_, i) => `r${i}`));
  Deno.serve({ port, hostname: "127.0.0.1", onListen: ready }, async (req) => {
    const url = new URL(req.url);
    const parts = url.pathname.split("/");
    if (url.pathname === "/" && req.method === "GET") return new Response("Hello, world");
    if (parts[1] === "users" && parts.length === 3 && req.method === "GET") {
      const id = Number(parts[2]);
      const limit = Number(url.searchParams.get("limit"));
      return Response.json({ id, limit });
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
} else if (kind === "hono") {
  const app = new Hono();
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
} else if (kind === "fw") {
  const routes = api({ autoScan: false })
    .route("GET", "/", endpoint(() => "Hello, world"))
    .route(
      "GET",
      "/users/:id",
      endpoint()
        .params({ id: Int })
        .query({ limit: Max(100, Min(1, Int)) })
        .returns({ id: Int, limit: Int })
        .handle((ctx) => ({ id: ctx.params.id, limit: ctx.queryParams().limit })),
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
    .use(http({ port, hostname: "127.0.0.1", signals: false }))
    .use(routes);
  await app.start();
  ready();
} else {
  console.error(`unknown server kind "${kind}"`);
  Deno.exit(2);
}
