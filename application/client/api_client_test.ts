import assert from "node:assert/strict";
import { apiClient, ApiStreamError } from "../client.ts";
import type { Application } from "../application.ts";
import {
  CLIENT_APP_ISSUER,
  CLIENT_APP_SECRET,
  clientApp,
  type ClientRoutes,
} from "../testdata/client_app.ts";
import { signJwt } from "../testdata/jwt.ts";

/** The error an async function throws (fails when it does not throw an `ApiStreamError`). */
async function streamError(fn: () => Promise<unknown>): Promise<ApiStreamError> {
  try {
    await fn();
  } catch (error) {
    assert.ok(error instanceof ApiStreamError, String(error));
    return error;
  }
  assert.fail("expected an ApiStreamError");
}

async function served(): Promise<
  { app: Application; url: string; [Symbol.asyncDispose](): Promise<void> }
> {
  const app = clientApp();
  await app.start();
  return { app, url: app.address!.url, [Symbol.asyncDispose]: () => app.stop() };
}

Deno.test("apiClient() fills path params, encodes query arrays and types the 200 data", async () => {
  await using s = await served();
  const client = apiClient<ClientRoutes>(s.url);
  const one = await client.get("/items/:id", { params: { id: 1 }, query: { fields: ["a", "b"] } });
  assert.equal(one.status, 200);
  assert.deepEqual(one.data, { id: 1, name: "tea", price: 3, tags: ["hot"] });
  const list = await client.get("/items", { query: { tags: ["hot", "x y"], limit: 5 } });
  assert.deepEqual(list.data, { tags: ["hot", "x y"], limit: 5, count: 0 });
  const hot = await client.get("/items", { query: { tags: ["hot"] } });
  assert.deepEqual(hot.data, { tags: ["hot"], count: 1 });
  const file = await client.get("/files/*path", { params: { path: "docs/a b/%.txt" } });
  assert.deepEqual(file.data, { path: "docs/a b/%.txt" });
});

Deno.test("apiClient() sends JSON bodies: 201, 202, 409 envelope, 400 validation body, PUT, PATCH", async () => {
  await using s = await served();
  const client = apiClient<ClientRoutes>(s.url);
  const created = await client.post("/items", { body: { name: "mug", price: 9, tags: ["cup"] } });
  assert.equal(created.status, 201);
  if (created.status === 201) {
    assert.deepEqual(created.data, { id: 2, name: "mug", price: 9, tags: ["cup"] });
  }
  const queued = await client.post("/items", { body: { name: "gold", price: 5000 } });
  assert.deepEqual([queued.status, queued.ok, queued.data], [202, true, { queued: true }]);
  const conflict = await client.post("/items", { body: { name: "mug", price: 1 } });
  assert.equal(conflict.status, 409);
  assert.equal(conflict.ok, false);
  assert.deepEqual(conflict.error, {
    statusCode: 409,
    message: 'Item "mug" exists',
    error: "Conflict",
  });
  const invalid = await client.post("/items", { body: { name: "", price: -1 } });
  assert.equal(invalid.status, 400);
  if (invalid.status === 400) {
    assert.deepEqual(invalid.error.errors?.map((e) => e.field), ["body.name", "body.price"]);
  }
  const put = await client.put("/items/:id", {
    params: { id: 2 },
    body: { name: "cup", price: 4 },
  });
  assert.deepEqual(put.data, { id: 2, name: "cup", price: 4, tags: [] });
  const patched = await client.patch("/items/:id", { params: { id: 2 }, body: { price: 6 } });
  assert.deepEqual(patched.data, { id: 2, name: "cup", price: 6, tags: [] });
});

Deno.test("apiClient() returns 204 without data, follows redirects unless told not to", async () => {
  await using s = await served();
  const client = apiClient<ClientRoutes>(s.url);
  const deleted = await client.delete("/items/:id", { params: { id: 1 } });
  assert.deepEqual([deleted.status, deleted.ok, deleted.data], [204, true, undefined]);
  const gone = await client.get("/items/:id", { params: { id: 1 } });
  assert.equal(gone.status, 404);
  const followed = await client.get("/old");
  assert.equal(followed.status, 404, "followed to /items/1, deleted above");
  const manual = await client.get("/old", { redirect: "manual" });
  assert.equal(manual.status, 302);
  assert.equal(manual.headers.get("location"), "/items/1");
});

Deno.test("apiClient() returns each error status with its body: 404, 422 custom, 401, 429, 500", async () => {
  await using s = await served();
  const client = apiClient<ClientRoutes>(s.url);
  const missing = await client.get("/items/:id", { params: { id: 99 } });
  assert.equal(missing.status, 404);
  if (missing.status === 404) {
    assert.deepEqual(missing.error, {
      statusCode: 404,
      message: "Item 99 not found",
      error: "Not Found",
    });
  }
  await client.post("/items", { body: { name: "vase", price: 30, tags: ["fragile"] } });
  const custom = await client.get("/items/:id", { params: { id: 2 } });
  assert.equal(custom.status, 422);
  if (custom.status === 422) assert.deepEqual(custom.error, { reason: "fragile", id: 2 });
  const anonymous = await client.get("/me");
  assert.equal(anonymous.status, 401);
  assert.equal(anonymous.headers.get("www-authenticate")?.startsWith("Bearer"), true);
  assert.equal((await client.get("/limited")).status, 200);
  const limited = await client.get("/limited");
  assert.equal(limited.status, 429);
  if (limited.status === 429) assert.equal(limited.error.statusCode, 429);
  const boom = await client.get("/boom");
  assert.equal(boom.status, 500);
  if (boom.status === 500) assert.equal(boom.error.message, "Internal Server Error");
});

Deno.test("apiClient() asks token() before every request and sends its value as Authorization", async () => {
  await using s = await served();
  let calls = 0;
  const token = async () => {
    calls++;
    const now = Math.floor(Date.now() / 1000);
    const jwt = await signJwt(
      { sub: `user-${calls}`, iss: CLIENT_APP_ISSUER, aud: "client-app", iat: now, exp: now + 60 },
      { alg: "HS256", secret: CLIENT_APP_SECRET },
    );
    return `Bearer ${jwt}`;
  };
  const client = apiClient<ClientRoutes>(s.url, { token, headers: { "x-trace": "t1" } });
  const first = await client.get("/me");
  const second = await client.get("/me");
  assert.deepEqual([first.status, first.data, second.data], [200, { sub: "user-1" }, {
    sub: "user-2",
  }]);
  assert.equal(calls, 2);
});

Deno.test("apiClient() rejects on a network failure, and on a missing path parameter", async () => {
  const listener = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  const port = listener.addr.port;
  listener.close();
  const client = apiClient<ClientRoutes>(`http://127.0.0.1:${port}`);
  await assert.rejects(() => client.get("/items/:id", { params: { id: 1 } }), TypeError);
  await assert.rejects(
    // deno-lint-ignore no-explicit-any
    () => client.get("/items/:id", { params: {} as any }),
    /Missing path parameter "id" for "\/items\/:id"/,
  );
});

Deno.test("apiClient() runs over app.request with no socket, streams included", async () => {
  const app = clientApp(false);
  const client = apiClient<ClientRoutes>("http://app", {
    fetch: (url, init) => app.request(url, init),
  });
  const one = await client.get("/items/:id", { params: { id: 1 } });
  assert.deepEqual([one.status, one.data?.name], [200, "tea"]);
  const created = await client.post("/items", { body: { name: "pot", price: 2 } });
  assert.equal(created.status, 201);
  const prices = [];
  for await (const p of client.stream("GET /prices")) prices.push(p.price);
  assert.deepEqual(prices, [100, 101, 102]);
  await app.stop();
});

Deno.test("client.stream() reads SSE messages with their ids and resumes after lastEventId", async () => {
  await using s = await served();
  const client = apiClient<ClientRoutes>(s.url);
  const stream = client.stream("GET /prices", { query: { symbol: "ACME" } });
  const got = [];
  for await (const m of stream) got.push(m);
  assert.deepEqual(got, [
    { symbol: "ACME", price: 100 },
    { symbol: "ACME", price: 101 },
    { symbol: "ACME", price: 102 },
  ]);
  assert.equal(stream.lastEventId, "2");
  const rest = [];
  for await (const m of client.stream("/prices", { lastEventId: "0" })) rest.push(m.price);
  assert.deepEqual(rest, [101, 102]);
});

Deno.test("client.stream() throws the error event's envelope, and a refusal with its status", async () => {
  await using s = await served();
  const client = apiClient<ClientRoutes>(s.url);
  const got: unknown[] = [];
  const e = await streamError(async () => {
    for await (const m of client.stream("/broken")) got.push(m);
  });
  assert.deepEqual(got, [{ n: 1 }]);
  assert.equal(e.status, 404);
  assert.deepEqual(e.body, { statusCode: 404, message: "The feed went away", error: "Not Found" });
  const wrong = apiClient<ClientRoutes>(`${s.url}/nowhere`);
  const refused = await streamError(async () => {
    for await (const _ of wrong.stream("/prices")) { /* nothing arrives */ }
  });
  assert.equal(refused.status, 404);
  assert.match(refused.message, /^Cannot open stream GET \/prices: 404/);
});

Deno.test("client.stream() reconnects with Last-Event-ID after the connection drops", async () => {
  const seen: (string | null)[] = [];
  const enc = new TextEncoder();
  await using server = Deno.serve({ hostname: "127.0.0.1", port: 0, onListen() {} }, (req) => {
    seen.push(req.headers.get("last-event-id"));
    const first = seen.length === 1;
    const body = new ReadableStream({
      start(c) {
        if (first) {
          c.enqueue(enc.encode('retry: 1\nid: 7\ndata: {"symbol":"A","price":1}\n\n'));
          setTimeout(() => c.error(new Error("dropped")), 20);
        } else {
          c.enqueue(enc.encode('id: 8\ndata: {"symbol":"A","price":2}\n\n'));
          c.close();
        }
      },
    });
    return new Response(body, { headers: { "content-type": "text/event-stream" } });
  });
  const client = apiClient<ClientRoutes>(`http://127.0.0.1:${server.addr.port}`);
  const prices = [];
  for await (const m of client.stream("/prices")) prices.push(m.price);
  assert.deepEqual(prices, [1, 2]);
  assert.deepEqual(seen, [null, "7"]);
});

Deno.test("client.connect() exchanges typed messages with a bidirectional WebSocket endpoint", async () => {
  await using s = await served();
  const client = apiClient<ClientRoutes>(s.url);
  const chat = client.connect("/chat/:room", { params: { room: "r1" } });
  chat.send({ text: "hi" });
  chat.send({ text: "there" });
  const got = [];
  for await (const m of chat) {
    got.push(m);
    if (got.length === 2) chat.close();
  }
  assert.deepEqual(got, [{ room: "r1", echo: "HI" }, { room: "r1", echo: "THERE" }]);
});

Deno.test("client.connect() ends a client stream and reads its result; an invalid message fails", async () => {
  await using s = await served();
  const client = apiClient<ClientRoutes>(s.url);
  const sum = client.connect("GET /sum");
  await sum.opened;
  for (const n of [1, 2, 3]) sum.send({ n });
  sum.end();
  const results = [];
  for await (const r of sum) results.push(r);
  assert.deepEqual(results, [{ sum: 6 }]);
  const bad = client.connect("/sum");
  // deno-lint-ignore no-explicit-any
  bad.send({ n: "x" } as any);
  const error = await streamError(async () => {
    for await (const _ of bad) { /* nothing arrives */ }
  });
  assert.equal(error.status, 400);
  assert.match(error.message, /message\.n must be an integer/);
});
