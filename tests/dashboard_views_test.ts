/**
 * The dashboard's Event Server, Schedules and Traces views: the JSON API on a real Event Server
 * with an open SSE subscriber, a schedule source and a span ring fed the spans of one request
 * (request -> publish -> two attempts with their log lines); then the three views in headless
 * Chromium (the Event Server view saved under docs/ with `FW_DASHBOARD_SCREENSHOTS=1`; the
 * Schedules and Traces screenshots come from the shop, tests/dashboard_browser_test.ts).
 */

import assert from "node:assert/strict";
import { application, http } from "@fw/application";
import { dashboard, type ScheduleSource, SpanRing } from "@fw/dashboard";
import { Int, topic } from "@fw/events";
import { eventServer } from "@fw/events/server";
import { createLogger } from "@fw/runtime";
import { Browser } from "./_cdp_browser.ts";
import { openDashboard, shoot } from "./_dashboard_page.ts";

const Ticks = topic("clock.tick", { n: Int });
const TRACE = "4bf92f3577b34da6a3ce929d0e0e4736";

function ringWithOneTrace(): SpanRing {
  const ring = new SpanRing({ traces: 20 });
  const t0 = Date.parse("2026-11-25T10:00:00Z");
  const span = (
    id: string,
    parent: string | undefined,
    name: string,
    kind: string,
    a: number,
    b: number,
    error?: string,
  ) =>
    ring.onEnd({
      traceId: TRACE,
      spanId: id.padStart(16, "0"),
      ...(parent ? { parentSpanId: parent.padStart(16, "0") } : {}),
      name,
      kind,
      startTime: t0 + a,
      endTime: t0 + b,
      ...(error ? { error } : {}),
      attributes: { "http.route": "/orders", "auth.sub": "ada", authorization: "Bearer x" },
    });
  span("1", undefined, "POST /orders", "server", 0, 12);
  span("2", "1", "publish shop.orders.placed", "producer", 8, 10);
  span(
    "3",
    "2",
    "shop.orders.placed attempt 1",
    "consumer",
    14,
    40,
    "Payment provider unavailable",
  );
  span("4", "2", "shop.orders.placed attempt 2", "consumer", 540, 560);
  ring.log(TRACE, "3".padStart(16, "0"), {
    time: t0 + 39,
    level: "warn",
    message: "charge failed: retry in 500 ms",
  });
  ring.log(TRACE, "4".padStart(16, "0"), { time: t0 + 559, level: "info", message: "order paid" });
  return ring;
}

const schedules: ScheduleSource = {
  schedules: () => [
    {
      name: "nightly-report",
      every: "0 3 * * *",
      next: "2026-11-26T03:00:00Z",
      lastRun: "2026-11-25T03:00:00Z",
      outcome: "ok",
      durationMs: 840,
      running: 0,
    },
    {
      name: "expire-carts",
      every: "*/5 * * * *",
      next: "2026-11-25T10:05:00Z",
      lastRun: "2026-11-25T10:00:00Z",
      outcome: "failed",
      error: "lock timeout",
      durationMs: 5003,
      running: 1,
    },
  ],
};

function makeApp() {
  const es = eventServer({ topics: [Ticks] });
  const app = application({ logger: createLogger({ level: "silent" }) })
    .use(http({ port: 0, hostname: "127.0.0.1", signals: false }))
    .use(dashboard({ secure: false, eventServer: es, schedules, traces: ringWithOneTrace() }))
    .use(es);
  return app;
}

Deno.test("dashboard views: Event Server subscriptions, schedules and a trace's waterfall", async () => {
  const app = makeApp();
  await app.start();
  const sse = new AbortController();
  try {
    const url = app.address!.url;
    const stream = await fetch(`${url}/events/sse/clock.tick`, {
      headers: { accept: "text/event-stream" },
      signal: sse.signal,
    });
    assert.equal(stream.status, 200);
    const es = await (await fetch(`${url}/_fw/api/event-server`)).json();
    assert.deepEqual(es, {
      mounted: true,
      connections: 1,
      subscriptions: { "clock.tick": 1 },
      slowConsumerCloses: 0,
    });
    const s = await (await fetch(`${url}/_fw/api/schedules`)).json();
    assert.equal(s.available, true);
    assert.deepEqual(s.items.map((x: { name: string }) => x.name), [
      "nightly-report",
      "expire-carts",
    ]);
    const list = await (await fetch(`${url}/_fw/api/traces`)).json();
    assert.deepEqual(
      list.items.map((
        t: { name: string; spans: number; error: boolean },
      ) => [t.name, t.spans, t.error]),
      [
        ["POST /orders", 4, true],
      ],
    );
    const trace = await (await fetch(`${url}/_fw/api/traces/${TRACE}`)).json();
    assert.deepEqual(trace.spans.map((x: { name: string; depth: number }) => [x.depth, x.name]), [
      [0, "POST /orders"],
      [1, "publish shop.orders.placed"],
      [2, "shop.orders.placed attempt 1"],
      [2, "shop.orders.placed attempt 2"],
    ]);
    assert.deepEqual(trace.spans[0].attributes, { "http.route": "/orders" });
    assert.equal(trace.spans[2].logs[0].message, "charge failed: retry in 500 ms");
    assert.equal((await fetch(`${url}/_fw/api/traces/${"0".repeat(32)}`)).status, 404);

    const browser = await Browser.launch();
    try {
      const page = await openDashboard(browser, `${url}/_fw/`);
      await page.evaluate("location.hash = '#event-server'");
      await page.waitFor(
        "document.getElementById('es-connections')?.textContent === '1'",
        "the connection count",
      );
      await shoot(page, "event-server");
      await page.evaluate("location.hash = '#schedules'");
      await page.waitFor(
        "document.querySelectorAll('#schedules tbody tr').length === 2",
        "the schedules",
      );
      await page.evaluate("location.hash = '#traces'");
      await page.waitFor("document.querySelector('#traces a')", "the trace list");
      await page.evaluate("document.querySelector('#traces a').click()");
      await page.waitFor(
        "document.querySelectorAll('#waterfall .bar-row').length === 4",
        "the waterfall",
      );
      assert.match(
        await page.evaluate<string>("document.getElementById('waterfall').textContent"),
        /order paid/,
      );
    } finally {
      await browser.close();
    }
  } finally {
    sse.abort();
    await app.stop();
  }
});
