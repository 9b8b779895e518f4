/**
 * Cost of a compiled endpoint against a bare handler building the same `Response`, for the three
 * request shapes of the HTTP benchmark: plain text, validated params + query, validated JSON body.
 *
 * Run: `deno bench -A application/compile_endpoint_bench.ts`
 */

import { type AppContext, Container, createLogger, Int, Min, type RequestInfo } from "@fw/runtime";
import { compileEndpoint } from "./compile_endpoint.ts";
import { endpoint } from "./endpoint.ts";

const app = {
  production: false,
  logger: createLogger({ level: "silent" }),
  container: new Container(),
  http: { maxBodyBytes: 1024 * 1024, trustProxy: false },
} as AppContext;
const info: RequestInfo = { server: { hostname: "localhost", port: 0, url: "http://localhost/" } };

const text = compileEndpoint(endpoint(() => "Hello, world"), { method: "GET", route: "/", app });
const user = compileEndpoint(
  endpoint()
    .params({ id: Int })
    .query({ limit: Min(1, Int) })
    .returns({ id: Int, limit: Int })
    .handle((ctx) => ({ id: ctx.params.id, limit: ctx.queryParams().limit })),
  { method: "GET", route: "/users/:id", app },
);
const Order = {
  sku: String,
  quantity: Min(1, Int),
  price: Number,
  currency: String,
  customer: String,
  express: Boolean,
  note: String,
};
const order = compileEndpoint(
  endpoint()
    .body(Order)
    .returns({ ok: Boolean, sku: String })
    .handle(async (ctx) => ({ ok: true, sku: (await ctx.body()).sku })),
  { method: "POST", route: "/orders", app },
);
const orderJson = JSON.stringify({
  sku: "A-1",
  quantity: 2,
  price: 9.5,
  currency: "EUR",
  customer: "c-42",
  express: false,
  note: "ring twice",
});
const orderRequest = () =>
  new Request("http://localhost/orders", {
    method: "POST",
    headers: { "content-type": "application/json", "content-length": String(orderJson.length) },
    body: orderJson,
  });

Deno.bench("bare: text", { group: "text", baseline: true }, () => {
  const req = new Request("http://localhost/");
  if (req.method === "GET") {
    new Response("Hello, world", { headers: { "content-type": "text/plain;charset=UTF-8" } });
  }
});
Deno.bench("fw: text", { group: "text" }, async () => {
  await text(new Request("http://localhost/"), {}, info);
});

Deno.bench("bare: params + query", { group: "user", baseline: true }, () => {
  const req = new Request("http://localhost/users/42?limit=10");
  const limit = Number(new URL(req.url).searchParams.get("limit"));
  Response.json({ id: Number("42"), limit });
});
Deno.bench("fw: params + query (validated)", { group: "user" }, async () => {
  await user(new Request("http://localhost/users/42?limit=10"), { id: "42" }, info);
});

Deno.bench("bare: JSON body", { group: "order", baseline: true }, async () => {
  const body = await orderRequest().json();
  if (typeof body.sku !== "string") throw new Error("invalid");
  Response.json({ ok: true, sku: body.sku });
});
Deno.bench("fw: JSON body (validated, response checked)", { group: "order" }, async () => {
  await order(orderRequest(), {}, info);
});
