/**
 * The shop dashboard (examples/shop) in headless Chromium: the page opens its SSE feed, an order
 * placed through the API appears live and turns `paid`, and an order placed with the page's own
 * form appears too.
 */

import assert from "node:assert/strict";
import { Browser } from "./_cdp_browser.ts";
import { post, startShop } from "./_shop.ts";

Deno.test({
  name: "shop dashboard in headless chromium: orders placed through the API appear live",
  async fn() {
    const shop = await startShop();
    const browser = await Browser.launch();
    try {
      const page = await browser.open(`${shop.url}/`);
      await page.waitFor(
        "document.getElementById('connection').textContent === 'live'",
        "the dashboard's live feed",
      );
      await page.waitFor("document.querySelectorAll('#sku option').length === 3", "the products");
      assert.equal(await page.evaluate("document.querySelectorAll('#orders tr').length"), 0);

      const res = await fetch(
        `${shop.url}/orders`,
        post({
          customer: "ada@example.com",
          items: [{ sku: "TEE-002", qty: 3 }],
          paymentToken: "tok_visa",
        }),
      );
      assert.equal(res.status, 201);
      const order = await res.json();
      const row = `document.querySelector('tr[data-id="${order.id}"]')`;
      await page.waitFor(`${row}?.dataset.status === "paid"`, "the order to show as paid", 60_000)
        .catch(async (err) => {
          // What the page and the shop saw, so a failure on a loaded CI machine says where the
          // update stopped (the feed, the payment handler or the broadcast to the dashboard).
          const seen = await page.evaluate(
            `JSON.stringify({ row: ${row}?.dataset.status ?? null, updates: globalThis.shop.updates, connection: document.getElementById('connection').textContent })`,
          ).catch((e) => String(e));
          throw new Error(
            `${err.message}; page: ${seen}; shop log:\n${shop.logs.lines().join("\n")}`,
          );
        });
      assert.deepEqual(
        await page.evaluate(`[...${row}.children].slice(0, 4).map((td) => td.textContent)`),
        [order.id.slice(0, 8), "paid", "3", "75.00"],
      );

      await page.evaluate(`(() => {
        document.getElementById("token").value = "tok_declined";
        document.getElementById("order-form").requestSubmit();
      })()`);
      await page.waitFor(
        "document.querySelector('tr[data-status=\"payment_failed\"]')",
        "the declined order placed from the page to show as failed",
      );
      assert.match(
        await page.evaluate("document.getElementById('message').textContent"),
        /placed$/,
      );
      assert.equal(await page.evaluate("document.querySelectorAll('#orders tr').length"), 2);
      assert.deepEqual(await page.evaluate("globalThis.shop.errors"), []);
      const png = await page.screenshot();
      assert.deepEqual([...png.slice(1, 4)], [0x50, 0x4e, 0x47], "a PNG screenshot");
    } finally {
      await browser.close();
      await shop.stop();
    }
  },
});
