/**
 * The operations dashboard on the shop example in headless Chromium, on Deno KV and on Redis
 * Streams: the page asks for a token, goes live over its one SSE stream, orders whose payment
 * keeps failing appear as dead letters, a redrive from the page sends them to the payments
 * handler (which now succeeds), and the page shows the list empty and the success count up; the
 * Schedules view shows the stock report's last run, the Traces view a POST /orders trace with its
 * publish and each attempt of the payments handler, with their log lines; one more is discarded
 * from the page after its confirmation.
 *
 * With `FW_DASHBOARD_SCREENSHOTS=1` the views are saved as PNG files under `docs/` (the ones the
 * guide shows).
 */

import assert from "node:assert/strict";
import { Browser } from "./_cdp_browser.ts";
import { dropRedisPrefix, openDashboard, shoot } from "./_dashboard_page.ts";
import { post, type RunningShop, startShop } from "./_shop.ts";

const REDIS = "redis://127.0.0.1:6379";
/** The stock report runs every 2 s in these tests (every 15 minutes by default). */
const REPORT_CRON = "*/2 * * * * *";

const handlerCell = (cls: string) =>
  `Number(document.querySelector('#handlers tr[data-topic="shop.orders.placed"] .${cls}')?.textContent ?? -1)`;

async function failAndRedrive(shop: RunningShop, engine: string, screenshots: boolean) {
  const browser = await Browser.launch();
  try {
    shop.gateway.down = true;
    const page = await openDashboard(browser, `${shop.url}/_fw/`, await shop.token());
    await page.waitFor(`${handlerCell("success")} === 0`, "the payments handler row");
    const orders = [];
    for (const sku of ["TEE-002", "MUG-001"]) {
      const res = await fetch(
        `${shop.url}/orders`,
        post({ customer: "ada@example.com", items: [{ sku, qty: 1 }], paymentToken: "tok_visa" }),
      );
      assert.equal(res.status, 201);
      orders.push((await res.json()).id);
    }
    await page.evaluate("location.hash = '#dead-letters'");
    await page.waitFor(
      "document.querySelectorAll('#dead-letters tbody tr').length === 2",
      `two dead letters on the page (${engine})`,
    );
    const topics = await page.evaluate<string[]>(
      "[...document.querySelectorAll('#dead-letters tbody tr')].map((r) => r.children[2].textContent)",
    );
    assert.deepEqual(topics, ["shop.orders.placed", "shop.orders.placed"]);
    assert.match(
      await page.evaluate<string>("document.querySelector('#dead-letters tbody tr').textContent"),
      /Payment provider unavailable/,
    );
    // the badge comes with the next live snapshot, the list with the view: either may be first
    await page.waitFor(
      "document.getElementById('dead-count').textContent === '2'",
      `the dead-letter badge at 2 (${engine})`,
    );
    if (screenshots) await shoot(page, "dead-letters");

    shop.gateway.down = false;
    await page.evaluate(`(() => {
      document.getElementById("dl-all").click();
      document.getElementById("dl-redrive").click();
    })()`);
    await page.waitFor(
      "!document.getElementById('dl-empty').hidden && document.querySelectorAll('#dead-letters tbody tr').length === 0",
      `the dead-letter list to empty (${engine})`,
    );
    assert.equal(
      await page.evaluate("document.getElementById('dl-status').textContent"),
      "Redriven: 2",
    );
    await page.evaluate("location.hash = '#overview'");
    await page.waitFor(`${handlerCell("success")} === 2`, `the success count up (${engine})`);
    await page.waitFor("document.getElementById('dead-count').textContent === ''", "no badge");
    if (screenshots) await shoot(page, "overview");

    await page.evaluate("location.hash = '#queues'");
    await page.waitFor(
      "[...document.querySelectorAll('#queues td')].some((td) => td.textContent === 'payments')",
      `the payments group in the Queues view (${engine})`,
    );
    if (screenshots) await shoot(page, "queues");
    assert.equal(await page.evaluate("document.querySelectorAll('#queues .error').length"), 0);

    // the stock report (every 2 s here) has run: its row shows a last run that went well
    await page.evaluate("location.hash = '#schedules'");
    const report = `document.querySelector('#schedules tr[data-schedule="stock-report"]')`;
    await page.waitFor(
      `${report}?.querySelector('.last-run').textContent !== 'never' && ${report}?.querySelector('.outcome').textContent === 'ok'`,
      `a finished run of the stock report (${engine})`,
    );
    assert.match(await page.evaluate<string>(`${report}.textContent`), /\*\/2 \* \* \* \* \*/);
    if (screenshots) await shoot(page, "schedules");

    // a POST /orders trace: the request, its publish, and each attempt of the payments handler
    await page.evaluate("location.hash = '#traces'");
    const orderTrace =
      "[...document.querySelectorAll('#traces a')].find((a) => a.textContent === 'POST /orders')";
    await page.waitFor(`${orderTrace} !== undefined`, `a POST /orders trace (${engine})`);
    await page.evaluate(`${orderTrace}.click()`);
    const names =
      "[...document.querySelectorAll('#waterfall .bar-name')].map((n) => n.textContent.trim())";
    await page.waitFor(
      `${names}.some((n) => n.startsWith('shop.orders.placed process #4'))`,
      `the waterfall with the last attempt (${engine})`,
    );
    const spans = await page.evaluate<string[]>(names);
    assert.equal(spans[0], "POST /orders");
    assert.equal(spans[1], "shop.orders.placed publish");
    assert.deepEqual(
      spans.filter((n) => n.startsWith("shop.orders.placed process")).slice(0, 4),
      [1, 2, 3, 4].map((n) => `shop.orders.placed process #${n} (Payment provider unavailable)`),
    );
    const waterfall = await page.evaluate<string>(
      "document.getElementById('waterfall').textContent",
    );
    assert.match(waterfall, /waited/);
    assert.match(
      waterfall,
      /warn message handled attempt=1 outcome=retry .*error=Payment provider unavailable/,
    );
    if (screenshots) {
      await page.evaluate("document.getElementById('waterfall').scrollIntoView()");
      await shoot(page, "traces");
    }
    assert.equal(await ackedPayments(shop, 2), 2);
    for (const id of orders) {
      const order = await (await fetch(`${shop.url}/orders/${id}`)).json();
      assert.equal(order.status, "paid");
    }

    // one more failure, discarded from the page after the confirmation
    shop.gateway.down = true;
    const failing = await fetch(
      `${shop.url}/orders`,
      post({ customer: "lin@example.com", items: [{ sku: "TEE-002", qty: 1 }], paymentToken: "t" }),
    );
    assert.equal(failing.status, 201);
    await page.evaluate("location.hash = '#dead-letters'");
    await page.waitFor(
      "document.querySelectorAll('#dead-letters tbody tr').length === 1",
      "the new dead letter",
    );
    await page.evaluate(`(() => {
      document.querySelector("#dead-letters .pick").click();
      document.getElementById("dl-discard").click();
    })()`);
    await page.waitFor("document.getElementById('confirm').open", "the confirmation");
    assert.match(
      await page.evaluate<string>("document.getElementById('confirm-text').textContent"),
      /^Discard 1 dead letter/,
    );
    await page.evaluate("document.getElementById('confirm-ok').click()");
    await page.waitFor(
      "document.getElementById('dl-status').textContent === 'Discarded: 1'",
      "the discard",
    );
    await page.waitFor(
      "document.querySelectorAll('#dead-letters tbody tr').length === 0",
      "the list empty after the discard",
    );
  } finally {
    await browser.close();
  }
}

Deno.test({
  name: "dashboard in headless chromium on the shop (Deno KV): dead letters redriven from the page",
  async fn() {
    const shop = await startShop({ reportCron: REPORT_CRON });
    try {
      await failAndRedrive(shop, "Deno KV", true);
    } finally {
      await shop.stop();
    }
  },
});

Deno.test({
  name:
    "dashboard in headless chromium on the shop (Redis Streams): dead letters redriven from the page",
  async fn() {
    const prefix = `fwtest:shop-dash:${crypto.randomUUID().slice(0, 8)}:`;
    const shop = await startShop({ redisUrl: REDIS, redisPrefix: prefix, reportCron: REPORT_CRON });
    try {
      await failAndRedrive(shop, "Redis", false);
    } finally {
      await shop.stop();
      await dropRedisPrefix(REDIS, prefix);
    }
  },
});

/** The number of `acked` completions of the payments handler once it reaches `n`. */
async function ackedPayments(shop: RunningShop, n: number): Promise<number> {
  for (let i = 0; i < 500; i++) {
    const acked = shop.handled("shop.orders.placed").filter((h) => h.outcome === "acked").length;
    if (acked >= n) return acked;
    await new Promise((r) => setTimeout(r, 20));
  }
  throw new Error(`Timed out waiting for ${n} acked payments`);
}
