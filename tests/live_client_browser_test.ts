/**
 * The live example (examples/live) in headless Chromium: the page loads the client bundled by the
 * app from `@fw/events/client`, follows two topics over one WebSocket, survives a restart of the
 * server (a new app on the same port, sharing the realtime broker that retains messages), resumes
 * with no gap and shows `recovered: true` (issue 15; spec 2.9, 4.4).
 */

import assert from "node:assert/strict";
import { memoryRealtime } from "@fw/events";
import { createLogger } from "@fw/runtime";
import { liveApp } from "../examples/live/src/main.ts";
import { Orders, Quotes } from "../examples/live/src/topics.ts";
import { Browser, type Page } from "./_cdp_browser.ts";

async function publish(base: string, topic: string, payload: unknown): Promise<void> {
  const res = await fetch(`${base}/events/publish`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ id: crypto.randomUUID(), topic, payload }),
  });
  assert.equal(res.status, 200, await res.text());
}

const items = (page: Page, list: string) =>
  page.evaluate<string[]>(
    `[...document.querySelectorAll('#${list} li')].map((li) => li.textContent)`,
  );
const text = (page: Page, id: string) =>
  page.evaluate<string>(`document.getElementById('${id}').textContent`);

Deno.test({
  name:
    "eventClient in headless chromium: two topics on one socket, resumed after a server restart with recovered true",
  async fn() {
    const realtime = memoryRealtime({ logger: createLogger({ level: "silent" }) });
    let app = liveApp({ port: 0, realtime, signals: false });
    await app.start();
    const port = app.address!.port;
    const base = `http://127.0.0.1:${port}`;
    const browser = await Browser.launch();
    try {
      const page = await browser.open(`${base}/`);
      await page.waitFor(
        "fwLive.subscribed.orders.length === 1 && fwLive.subscribed.quotes.length === 1",
        "both subscriptions",
      );
      assert.equal(await page.evaluate("fwLive.compatible"), true);
      assert.equal(await text(page, "orders-status"), "live, recovered: true");
      await publish(base, Orders.name, { n: 1, item: "tea" });
      await publish(base, Quotes.name, { n: 1, price: 101 });
      await publish(base, Orders.name, { n: 2, item: "cake" });
      await publish(base, Quotes.name, { n: 2, price: 102 });
      await page.waitFor(
        "document.querySelectorAll('#orders li, #quotes li').length === 4",
        "four events",
      );
      assert.deepEqual(await items(page, "orders"), ["#1 tea", "#2 cake"]);
      assert.deepEqual(await items(page, "quotes"), ["#1 101", "#2 102"]);
      assert.equal(await text(page, "connections"), "1", "one WebSocket for both topics");
      assert.equal(await text(page, "state"), "open");

      // Restart: stop the app, publish while it is down, start a new one on the same port.
      await app.stop();
      await page.waitFor("fwLive.client.state !== 'open'", "the client to notice the restart");
      await realtime.publish(Orders, { n: 3, item: "jam" });
      await realtime.publish(Quotes, { n: 3, price: 103 });
      app = liveApp({ port, realtime, signals: false });
      await app.start();
      await page.waitFor(
        "fwLive.subscribed.orders.length === 2 && fwLive.subscribed.quotes.length === 2",
        "both subscriptions to resume",
      );
      await publish(base, Orders.name, { n: 4, item: "bread" });
      await publish(base, Quotes.name, { n: 4, price: 104 });
      await page.waitFor(
        "document.querySelectorAll('#orders li, #quotes li').length === 8",
        "eight events",
      );
      assert.deepEqual(await items(page, "orders"), ["#1 tea", "#2 cake", "#3 jam", "#4 bread"]);
      assert.deepEqual(await items(page, "quotes"), ["#1 101", "#2 102", "#3 103", "#4 104"]);
      assert.equal(await text(page, "orders-status"), "resumed, recovered: true");
      assert.equal(await text(page, "quotes-status"), "resumed, recovered: true");
      assert.deepEqual(await page.evaluate("fwLive.subscribed"), {
        orders: [true, true],
        quotes: [true, true],
      });
      assert.equal(await text(page, "state"), "open");
      assert.equal(await text(page, "connections"), "2", "one socket before, one after");
      assert.equal(await text(page, "errors"), "", "no error shown");
    } finally {
      await browser.close();
      await app.stop();
      await realtime.close();
    }
  },
});
