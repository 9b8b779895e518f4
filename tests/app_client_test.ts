/**
 * The example app (`examples/app`) called through `apiClient<ApiRoutes>()`, with the route map
 * `deno task generate` wrote into `.gen/api.gen.ts`: every route of the example, each result
 * narrowed by status to its declared type. The users run over `app.request` (no socket); the
 * orders, which publish events, over a real socket once the app has started.
 */

import assert from "node:assert/strict";
import { apiClient } from "@fw/application/client";
import type { ApiRoutes } from "../examples/app/src/.gen/api.gen.ts";

Deno.env.set("PORT", "0"); // read when the example is imported: a free port
const { app } = await import("../examples/app/src/main.ts");
const client = apiClient<ApiRoutes>("http://app", { fetch: (url, init) => app.request(url, init) });

Deno.test("examples/app through apiClient<ApiRoutes>: users, by status and type", async () => {
  const list = await client.get("/users", { query: { limit: 1 } });
  assert.equal(list.status, 200);
  if (list.status === 200) assert.deepEqual(list.data.map((u) => u.name), ["Ada"]);

  const ada = await client.get("/users/:id", { params: { id: 1 } });
  if (ada.status !== 200) assert.fail(`GET /users/1: ${ada.status}`);
  assert.equal(ada.data.email, "ada@example.com");
  const nobody = await client.get("/users/:id", { params: { id: 404 } });
  if (nobody.status !== 404) assert.fail(`GET /users/404: ${nobody.status}`);
  assert.equal(nobody.error.message, "User 404 not found");

  const made = await client.post("/users", {
    body: { name: "Linus", email: "linus@example.com", tags: ["kernel"] },
  });
  if (made.status !== 201) assert.fail(`POST /users: ${made.status}`);
  const id = made.data.id;
  const invalid = await client.post("/users", { body: { name: "", email: "x", tags: [] } });
  if (invalid.status !== 400) assert.fail(`POST /users invalid: ${invalid.status}`);
  assert.deepEqual(invalid.error.errors?.map((e) => e.field), ["body.name", "body.email"]);

  const put = await client.put("/users/:id", {
    params: { id },
    body: { name: "Linus T", email: "linus@example.com", tags: [] },
  });
  if (put.status !== 200) assert.fail(`PUT /users/${id}: ${put.status}`);
  assert.equal(put.data.name, "Linus T");
  const found = await client.get("/search/users", { query: { q: "linus" } });
  if (found.status !== 200) assert.fail(`GET /search/users: ${found.status}`);
  assert.deepEqual(found.data.map((u) => u.id), [id]);
  const deleted = await client.delete("/users/:id", { params: { id } });
  assert.deepEqual([deleted.status, deleted.data], [204, undefined]);
  const gone = await client.put("/users/:id", {
    params: { id },
    body: { name: "x", email: "x@example.com", tags: [] },
  });
  assert.equal(gone.status, 404);
});

Deno.test("examples/app through apiClient<ApiRoutes>: orders, files, redirect, health and audit", async () => {
  await app.start();
  const client = apiClient<ApiRoutes>(app.address!.url);
  const order = await client.post("/orders", {
    body: {
      id: crypto.randomUUID(),
      customer: "c-1",
      items: [{ sku: "a", qty: 2 }],
      total: 12,
      currency: "EUR",
      placedAt: "2026-11-25T10:00:00Z",
    },
  });
  if (order.status !== 201) assert.fail(`POST /orders: ${order.status}`);
  assert.deepEqual([order.data.status, order.data.items], ["accepted", 1]);
  const file = await client.get("/files/*path", { params: { path: "docs/readme.md" } });
  assert.deepEqual([file.status, file.data], [200, "file: docs/readme.md"]);
  assert.equal(file.headers.get("cache-control"), "no-store");
  const redirect = await client.get("/redirect", { redirect: "manual" });
  assert.deepEqual([redirect.status, redirect.headers.get("location")], [302, "/health"]);
  const health = await client.get("/health");
  assert.deepEqual([health.status, health.data], [200, "ok"]);
  const audit = await client.get("/audit");
  assert.equal(audit.status, 200);
  assert.ok(Array.isArray(audit.data));
  const followed = await client.get("/redirect");
  assert.deepEqual([followed.status, followed.data], [200, "ok"]);
  await app.stop();
});
