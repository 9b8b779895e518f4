/**
 * Type tests for `apiClient<Routes>()` (`@fw/application/client`): paths, params, query, bodies,
 * results by status and stream messages typed from the route definitions. `deno check` (and so
 * `deno test` and `deno task ok`) fails when an `@ts-expect-error` line stops being an error, that
 * is when the client stops catching a mistake, or when a correct line stops compiling. Nothing
 * here sends a request: the calls sit in functions that are never run.
 */

import { endpoint, Int } from "@fw/application";
import {
  type ApiClient,
  apiClient,
  type ApiErrorBody,
  type ApiValidationBody,
  type RouteEntry,
} from "@fw/application/client";
import type { ClientRoutes } from "../application/testdata/client_app.ts";
import type { ApiRoutes } from "../examples/app/src/.gen/api.gen.ts";

type Equal<A, B> = (<T>() => T extends A ? 1 : 2) extends (<T>() => T extends B ? 1 : 2) ? true
  : false;
function expectType<T extends true>(_: T): void {}

const client: ApiClient<ClientRoutes> = apiClient<ClientRoutes>("http://127.0.0.1:1");
type Item = { id: number; name: string; price: number; tags: string[] };

Deno.test("apiClient() types the data and error of each documented status", () => {
  async function _calls() {
    const res = await client.get("/items/:id", { params: { id: 1 } });
    expectType<Equal<typeof res.status, 200 | 400 | 404 | 422 | 500>>(true);
    if (res.status === 200) expectType<Equal<typeof res.data, Item>>(true);
    if (res.status === 404) expectType<Equal<typeof res.error, ApiErrorBody>>(true);
    if (res.status === 422) {
      expectType<Equal<typeof res.error, { reason: string; id: number }>>(true);
    }
    if (res.status === 400) expectType<Equal<typeof res.error, ApiValidationBody>>(true);
    if (res.ok) expectType<Equal<typeof res.data, Item>>(true);

    const created = await client.post("/items", { body: { name: "a", price: 1 } });
    expectType<Equal<typeof created.status, 201 | 202 | 400 | 409 | 413 | 415 | 500>>(true);
    if (created.status === 202) expectType<Equal<typeof created.data, { queued: boolean }>>(true);

    const deleted = await client.delete("/items/:id", { params: { id: 1 } });
    if (deleted.status === 204) expectType<Equal<typeof deleted.data, undefined>>(true);

    const me = await client.get("/me");
    expectType<Equal<typeof me.status, 200 | 400 | 401 | 403 | 500>>(true);
    const limited = await client.get("/limited");
    expectType<Equal<typeof limited.status, 200 | 400 | 429 | 500>>(true);

    // a route without declared responses: any status, unknown data
    const file = await client.get("/files/*path", { params: { path: "a/b" } });
    expectType<Equal<typeof file.status, number>>(true);
    expectType<Equal<typeof file.data, unknown>>(true);

    // @ts-expect-error a status the route does not document
    if (res.status === 409) return;
    // @ts-expect-error data is absent on an error status
    if (res.status === 404) res.data.name;
  }
});

Deno.test("apiClient() rejects wrong paths, methods, params, query and bodies", () => {
  async function _mistakes() {
    // @ts-expect-error unknown path
    await client.get("/itemz/:id", { params: { id: 1 } });
    // @ts-expect-error no PUT on this path
    await client.put("/items", { body: { name: "a", price: 1 } });
    // @ts-expect-error a stream route is not a unary call
    await client.get("/prices");
    // @ts-expect-error missing params
    await client.get("/items/:id");
    // @ts-expect-error mistyped param
    await client.get("/items/:id", { params: { id: "1" } });
    // @ts-expect-error unknown param
    await client.get("/items/:id", { params: { id: 1, other: 2 } });
    // @ts-expect-error catch-all param missing
    await client.get("/files/*path", { params: {} });
    // @ts-expect-error missing required query
    await client.get("/items");
    // @ts-expect-error mistyped query
    await client.get("/items", { query: { tags: "hot" } });
    // @ts-expect-error mistyped optional query
    await client.get("/items", { query: { tags: [], limit: "5" } });
    // @ts-expect-error missing body
    await client.post("/items");
    // @ts-expect-error mistyped body
    await client.post("/items", { body: { name: "a", price: "1" } });
    // @ts-expect-error missing body field
    await client.patch("/items/:id", { params: { id: 1 }, body: {} });
    // @ts-expect-error a body on a route that takes none
    await client.delete("/items/:id", { params: { id: 1 }, body: { x: 1 } });
  }
});

Deno.test("client.stream() and client.connect() type their messages", () => {
  async function _streams() {
    for await (const price of client.stream("GET /prices", { query: { symbol: "A" } })) {
      expectType<Equal<typeof price, { symbol: string; price: number }>>(true);
    }
    const chat = client.connect("/chat/:room", { params: { room: "r" } });
    chat.send({ text: "hi" });
    for await (const m of chat) expectType<Equal<typeof m, { room: string; echo: string }>>(true);
    const sum = client.connect("GET /sum");
    sum.send({ n: 1 });
    for await (const r of sum) expectType<Equal<typeof r, { sum: number }>>(true);

    // @ts-expect-error a unary route is not a stream
    client.stream("/items");
    // @ts-expect-error a bidirectional route is not read over SSE
    client.stream("/chat/:room", { params: { room: "r" } });
    // @ts-expect-error missing params
    client.connect("/chat/:room");
    // @ts-expect-error wrong message type
    chat.send({ text: 1 });
    // @ts-expect-error mistyped stream query
    client.stream("/prices", { query: { symbol: 1 } });
  }
});

Deno.test("RouteEntry adds a hand-registered route to a route map", () => {
  const ping = endpoint().params({ n: Int }).returns({ pong: Int }).handle((ctx) => ({
    pong: ctx.params.n,
  }));
  type Routes = ApiRoutes & RouteEntry<"GET", "/v1/ping/:n", typeof ping>;
  async function _calls(c: ApiClient<Routes>) {
    const res = await c.get("/v1/ping/:n", { params: { n: 1 } });
    if (res.status === 200) expectType<Equal<typeof res.data, { pong: number }>>(true);
    // @ts-expect-error mistyped param of the hand-registered route
    await c.get("/v1/ping/:n", { params: { n: "x" } });
  }
});

Deno.test("ApiRoutes of examples/app types every route of the example", () => {
  async function _calls(c: ApiClient<ApiRoutes>) {
    type User = { id: number; name: string; email: string; tags: string[] };
    const health = await c.get("/health");
    if (health.status === 200) expectType<Equal<typeof health.data, string>>(true);
    const users = await c.get("/users", { query: { limit: 10 } });
    if (users.status === 200) expectType<Equal<typeof users.data, User[]>>(true);
    const user = await c.get("/users/:id", { params: { id: 1 } });
    if (user.status === 200) expectType<Equal<typeof user.data, User>>(true);
    if (user.status === 404) expectType<Equal<typeof user.error, ApiErrorBody>>(true);
    const made = await c.post("/users", { body: { name: "a", email: "a@b.c", tags: [] } });
    expectType<Equal<typeof made.status, 201 | 400 | 409 | 413 | 415 | 500>>(true);
    const put = await c.put("/users/:id", {
      params: { id: 1 },
      body: { name: "a", email: "a@b.c", tags: [] },
    });
    if (put.status === 200) expectType<Equal<typeof put.data, User>>(true);
    const del = await c.delete("/users/:id", { params: { id: 1 } });
    expectType<Equal<typeof del.status, 204 | 400 | 500>>(true);
    const found = await c.get("/search/users", { query: { q: "a" } });
    if (found.status === 200) expectType<Equal<typeof found.data, User[]>>(true);
    const order = await c.post("/orders", {
      body: {
        id: crypto.randomUUID(),
        customer: "c",
        items: [{ sku: "s", qty: 1 }],
        total: 1,
        currency: "EUR",
        placedAt: new Date().toISOString(),
      },
    });
    if (order.status === 201) {
      expectType<Equal<typeof order.data, { id: string; status: string; items: number }>>(true);
    }
    await c.get("/files/*path", { params: { path: "a/b" } });
    await c.get("/redirect");
    await c.get("/audit");

    // @ts-expect-error the example has no PATCH /users/:id
    await c.patch("/users/:id", { params: { id: 1 }, body: {} });
    // @ts-expect-error query limit is a number
    await c.get("/users", { query: { limit: "10" } });
    // @ts-expect-error email is required
    await c.post("/users", { body: { name: "a", tags: [] } });
  }
});
