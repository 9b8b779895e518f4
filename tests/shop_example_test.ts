/**
 * The shop example (examples/shop) through `app.request()`: validation and statuses, orders paid
 * by the payments handler over the Deno KV transport, retries, dead letters listed and redriven
 * by the admin routes, OAuth on the admin routes, and the live feed over SSE.
 */

import assert from "node:assert/strict";
import { generate } from "@fw/application/cli";
import { SseReader } from "../application/testdata/stream_clients.ts";
import { shopApp } from "../examples/shop/src/main.ts";
import { schemaErrors, semanticProblems } from "./_openapi_checks.ts";
import { eventually, post, startShop } from "./_shop.ts";

const ORDER = { customer: "ada@example.com", items: [{ sku: "MUG-001", qty: 2 }] };

Deno.test("shop: the catalogue is served and bad orders are refused with their reason", async () => {
  const shop = await startShop();
  try {
    const products = await (await shop.request("/products")).json();
    assert.deepEqual(products.map((p: { sku: string }) => p.sku), [
      "BAG-003",
      "MUG-001",
      "TEE-002",
    ]);
    const mug = await shop.request("/products/MUG-001");
    assert.deepEqual(await mug.json(), {
      sku: "MUG-001",
      name: "Enamel mug",
      price: 1200,
      stock: 50,
    });
    assert.equal((await shop.request("/products/NOPE-1")).status, 404);
    assert.equal((await shop.request("/products/lower")).status, 400);

    const invalid = await shop.request(
      "/orders",
      post({ customer: "nope", items: [{ sku: "MUG-001", qty: 0 }] }),
    );
    assert.equal(invalid.status, 400);
    assert.deepEqual((await invalid.json()).errors.map((e: { field: string }) => e.field), [
      "body.customer",
      "body.items[0].qty",
      "body.paymentToken",
    ]);
    const empty = await shop.request(
      "/orders",
      post({ ...ORDER, items: [], paymentToken: "tok_visa" }),
    );
    assert.equal(empty.status, 400);
    assert.equal((await empty.json()).message, "An order needs at least one item");
    const unknown = await shop.request(
      "/orders",
      post({ ...ORDER, items: [{ sku: "NOPE-1", qty: 1 }], paymentToken: "tok_visa" }),
    );
    assert.equal(unknown.status, 404);
    assert.equal((await unknown.json()).message, 'Product "NOPE-1" not found');
    const tooMany = await shop.request(
      "/orders",
      post({ ...ORDER, items: [{ sku: "BAG-003", qty: 6 }], paymentToken: "tok_visa" }),
    );
    assert.equal(tooMany.status, 409);
    assert.equal(
      (await tooMany.json()).message,
      'Not enough stock for "BAG-003": 5 left, 6 ordered',
    );
    assert.equal(
      (await shop.request("/orders/2b1e3f9c-8a3d-4e55-9d47-0c6f1f6b8a11")).status,
      404,
    );
  } finally {
    await shop.stop();
  }
});

Deno.test("shop: an order reserves stock and the payments handler marks it paid", async () => {
  const shop = await startShop();
  try {
    const res = await shop.request("/orders", post({ ...ORDER, paymentToken: "tok_visa" }));
    assert.equal(res.status, 201);
    const order = await res.json();
    assert.equal(order.status, "pending");
    assert.equal(order.total, 2400);
    assert.deepEqual(order.items, [{ sku: "MUG-001", qty: 2, price: 1200 }]);
    assert.equal((await (await shop.request("/products/MUG-001")).json()).stock, 48);

    const paid = await eventually(async () => {
      const o = await (await shop.request(`/orders/${order.id}`)).json();
      return o.status === "paid" && o;
    }, "the order to be paid");
    assert.equal(paid.failure, undefined);
    const log = () => shop.handled("shop.orders.placed").map((e) => [e.attempt, e.outcome]);
    await eventually(() => log().length === 1, "the completion log entry");
    assert.deepEqual(log(), [[1, "acked"]]);
  } finally {
    await shop.stop();
  }
});

Deno.test("shop: a payment that fails once is retried and paid", async () => {
  const shop = await startShop();
  try {
    const order = await (await shop.request(
      "/orders",
      post({ ...ORDER, paymentToken: "tok_flaky" }),
    )).json();
    await eventually(
      async () => (await (await shop.request(`/orders/${order.id}`)).json()).status === "paid",
      "the order to be paid on the retry",
    );
    const log = () => shop.handled("shop.orders.placed").map((e) => [e.attempt, e.outcome]);
    await eventually(() => log().length === 2, "two completion log entries");
    assert.deepEqual(log(), [[1, "retry"], [2, "acked"]]);
  } finally {
    await shop.stop();
  }
});

Deno.test("shop: admin routes need a token with the admin scope", async () => {
  const shop = await startShop();
  try {
    const anonymous = await shop.request("/admin/dead-letters");
    assert.equal(anonymous.status, 401);
    assert.equal(anonymous.headers.get("www-authenticate"), "Bearer");
    const forged = await shop.request("/admin/dead-letters", {
      headers: { authorization: `Bearer ${(await shop.token()).slice(0, -4)}AAAA` },
    });
    assert.equal(forged.status, 401);
    const reader = await shop.request("/admin/orders", {
      headers: { authorization: `Bearer ${await shop.token("shop:read")}` },
    });
    assert.equal(reader.status, 403);

    const admin = { authorization: `Bearer ${await shop.token()}` };
    const put = await shop.request("/admin/products/CAP-004", {
      method: "PUT",
      headers: { ...admin, "content-type": "application/json" },
      body: JSON.stringify({ name: "Wool cap", price: 1500, stock: 3 }),
    });
    assert.equal(put.status, 200);
    assert.deepEqual(await put.json(), { sku: "CAP-004", name: "Wool cap", price: 1500, stock: 3 });
    assert.equal((await (await shop.request("/products/CAP-004")).json()).stock, 3);
    const bad = await shop.request("/admin/products/CAP-004", {
      method: "PUT",
      headers: { ...admin, "content-type": "application/json" },
      body: JSON.stringify({ name: "", price: -1, stock: 1 }),
    });
    assert.equal(bad.status, 400);

    await shop.request("/orders", post({ ...ORDER, paymentToken: "tok_visa" }));
    const orders = await (await shop.request("/admin/orders?limit=5", { headers: admin }))
      .json();
    assert.deepEqual(orders.map((o: { customer: string }) => o.customer), ["ada@example.com"]);
  } finally {
    await shop.stop();
  }
});

Deno.test("shop: payments that keep failing are dead-lettered, listed, and redriven once fixed", async () => {
  const shop = await startShop();
  const admin = { authorization: `Bearer ${await shop.token()}` };
  try {
    shop.gateway.down = true;
    const order = await (await shop.request(
      "/orders",
      post({ ...ORDER, paymentToken: "tok_visa" }),
    )).json();
    const failed = await eventually(async () => {
      const o = await (await shop.request(`/orders/${order.id}`)).json();
      return o.status === "payment_failed" && o;
    }, "the order to fail");
    assert.equal(failed.failure, "PaymentError: Payment provider unavailable");

    const dead = await eventually(async () => {
      const list = await (await shop.request("/admin/dead-letters", { headers: admin })).json();
      return list.length === 1 && list;
    }, "the dead letter");
    assert.equal(dead[0].topic, "shop.orders.placed");
    assert.equal(dead[0].orderId, order.id);
    assert.equal(dead[0].attempts, 4);
    assert.equal(dead[0].handler, "events/payments.on.ts#default");
    assert.equal(dead[0].error, "Payment provider unavailable");
    assert.equal(shop.gateway.calls, 4);
    const log = () => shop.handled("shop.orders.placed").map((e) => e.outcome);
    await eventually(() => log().length === 4, "four completion log entries");
    assert.deepEqual(log(), ["retry", "retry", "retry", "dead-lettered"]);

    shop.gateway.down = false;
    const none = await shop.request(
      "/admin/dead-letters/redrive",
      post({ ids: ["not-an-id"] }, admin),
    );
    assert.deepEqual(await none.json(), { redriven: 0 });
    const redrive = await shop.request(
      "/admin/dead-letters/redrive",
      post({ ids: [dead[0].id] }, admin),
    );
    assert.equal(redrive.status, 200);
    assert.deepEqual(await redrive.json(), { redriven: 1 });
    const paid = await eventually(async () => {
      const o = await (await shop.request(`/orders/${order.id}`)).json();
      return o.status === "paid" && o;
    }, "the redriven order to be paid");
    assert.equal(paid.failure, undefined);
    assert.deepEqual(
      await (await shop.request("/admin/dead-letters", { headers: admin })).json(),
      [],
    );
  } finally {
    await shop.stop();
  }
});

Deno.test("shop: the live feed sends recent orders, then every change", async () => {
  const shop = await startShop();
  let feed: SseReader | undefined;
  try {
    const first = await (await shop.request(
      "/orders",
      post({ ...ORDER, paymentToken: "tok_visa" }),
    )).json();
    await eventually(
      async () => (await (await shop.request(`/orders/${first.id}`)).json()).status === "paid",
      "the first order to be paid",
    );
    await eventually(
      () => shop.handled("shop.orders.changed").length === 2,
      "the first order's changes (pending, paid) to reach this instance's dashboards",
    );
    feed = new SseReader(
      await fetch(`${shop.url}/orders/live`, { headers: { accept: "text/event-stream" } }),
    );
    const recent = JSON.parse((await feed.nextEvent())!.data!);
    assert.deepEqual([recent.id, recent.status, recent.items], [first.id, "paid", 2]);

    const second = await (await shop.request(
      "/orders",
      post({ ...ORDER, paymentToken: "tok_visa" }),
    )).json();
    const statuses: string[] = [];
    while (statuses.at(-1) !== "paid") {
      const summary = JSON.parse((await feed.nextEvent())!.data!);
      assert.equal(summary.id, second.id);
      assert.equal(summary.customer, undefined, "no customer data on the public feed");
      statuses.push(summary.status);
    }
    assert.deepEqual(statuses, ["pending", "paid"]);
  } finally {
    await feed?.cancel();
    await shop.stop();
  }
});

Deno.test("shop: the dashboard page is served and the committed .gen/ loaders are current", async () => {
  const shop = await startShop();
  try {
    const page = await shop.app.request("/");
    assert.equal(page.headers.get("content-type"), "text/html; charset=utf-8");
    assert.match(await page.text(), /<script type="module" src="\/dashboard\.js"><\/script>/);
    const script = await shop.app.request("/dashboard.js");
    assert.equal(script.headers.get("content-type"), "text/javascript; charset=utf-8");
    assert.match(await script.text(), /\/orders\/live/);
    const doc = await (await shop.app.request("/openapi.json")).json();
    assert.deepEqual(await schemaErrors(doc), []);
    assert.deepEqual(semanticProblems(doc), []);
    assert.deepEqual(doc.paths["/admin/dead-letters/redrive"].post.security, [{ bearerAuth: [] }]);
    assert.equal(doc.paths["/products"].get.security, undefined);
  } finally {
    await shop.stop();
  }
  const gen = new URL("../examples/shop/src/.gen/", import.meta.url);
  const before = await Promise.all(
    ["api.gen.ts", "events.gen.ts"].map((f) => Deno.readTextFile(new URL(f, gen))),
  );
  await generate(new URL("../examples/shop/src/main.ts", import.meta.url).href);
  const after = await Promise.all(
    ["api.gen.ts", "events.gen.ts"].map((f) => Deno.readTextFile(new URL(f, gen))),
  );
  assert.deepEqual(after, before, "run `deno task generate` and commit .gen/");
});

Deno.test("shop: start-up fails with a clear message when the token secret is missing or weak", () => {
  const saved = Deno.env.get("SHOP_JWT_SECRET");
  Deno.env.delete("SHOP_JWT_SECRET");
  try {
    assert.throws(() => shopApp({ config: { kvPath: ":memory:" } }), {
      message: "Missing SHOP_JWT_SECRET: set it to a random string of at least 32 characters " +
        "(`deno task dev:shop` sets a development one)",
    });
    assert.throws(
      () => shopApp({ config: { kvPath: ":memory:", jwtSecret: "short" } }),
      { message: "Invalid SHOP_JWT_SECRET: expected at least 32 characters, got 5" },
    );
  } finally {
    if (saved !== undefined) Deno.env.set("SHOP_JWT_SECRET", saved);
  }
});

Deno.test("shop: concurrent orders never sell more than the stock", async () => {
  const shop = await startShop();
  try {
    const bag = { ...ORDER, items: [{ sku: "BAG-003", qty: 1 }], paymentToken: "tok_visa" };
    const answers = await Promise.all(
      Array.from({ length: 8 }, () => shop.request("/orders", post(bag))),
    );
    const statuses = answers.map((r) => r.status).sort();
    await Promise.all(answers.map((r) => r.body?.cancel()));
    assert.deepEqual(statuses, [201, 201, 201, 201, 201, 409, 409, 409]);
    assert.equal((await (await shop.request("/products/BAG-003")).json()).stock, 0);
  } finally {
    await shop.stop();
  }
});
