/**
 * The dashboard's Traces and Schedules views fed by the application itself: with `telemetry()`
 * before `dashboard()`, a request that publishes, and a handler that fails once, shows as one
 * trace (request -> publish -> wait -> each attempt) with the log lines of each span; with an
 * OpenTelemetry SDK provider the ring holds the exported ids, and spans its sampler dropped are
 * not kept; the dashboard's own requests are left out. The cron schedules of `events()` show
 * with their last run without any option.
 */

import assert from "node:assert/strict";
import { AlwaysOffSampler } from "@opentelemetry/sdk-trace";
import { api, application, endpoint } from "@fw/application";
import { telemetry } from "@fw/application/telemetry";
import { dashboard } from "@fw/dashboard";
import { events, getPublisher, handler, schedule } from "@fw/events";
import { createLogger, type Logger, ManualClock, MemorySink } from "@fw/runtime";
import { memoryTracing, Ordered } from "./_tracing.ts";

interface Waterfall {
  spans: Array<{
    spanId: string;
    parentSpanId?: string;
    depth: number;
    name: string;
    kind: string;
    waitMs?: number;
    error?: string;
    attributes: Record<string, unknown>;
    logs: Array<{ level: string; message: string; fields?: Record<string, unknown> }>;
  }>;
}

function makeApp(logger: Logger, tracerProvider?: ReturnType<typeof memoryTracing>["provider"]) {
  let attempts = 0;
  let shipped!: () => void;
  const done = new Promise<void>((resolve) => shipped = resolve);
  const ship = handler(Ordered)
    .options({ group: "shipping", maxRetries: 1, maxBackoff: 20, jitter: 0 })
    .handle((m) => {
      logger.info("shipping", { order: m.payload.id, authorization: "Bearer secret" });
      if (++attempts === 1) throw new Error("warehouse busy");
      shipped();
    });
  const publish = getPublisher(Ordered);
  const app = application({ logger })
    .use(telemetry({ http: false, ...(tracerProvider ? { tracerProvider } : {}) }))
    .use(dashboard({ secure: false }))
    .use(
      api({ autoScan: false }).route(
        "POST",
        "/orders/:id",
        endpoint().params({ id: String }).handle(async (ctx) => {
          await publish({ id: ctx.params.id, total: 3 });
          return { ok: true };
        }),
      ),
    )
    .use(events({ autoScan: false, brokerPort: false, handlers: [ship] }));
  return { app, done };
}

async function theTrace(app: ReturnType<typeof makeApp>["app"]): Promise<Waterfall> {
  const list = await (await app.request("/_fw/api/traces")).json();
  assert.equal(list.available, true);
  const ours = list.items.filter((t: { name: string }) => t.name === "POST /orders/:id");
  assert.equal(ours.length, 1, JSON.stringify(list.items));
  assert.ok(!list.items.some((t: { name: string }) => t.name.includes("/_fw")));
  return await (await app.request(`/_fw/api/traces/${ours[0].traceId}`)).json();
}

function checkWaterfall(w: Waterfall): void {
  assert.deepEqual(w.spans.map((s) => [s.depth, s.name, s.kind]), [
    [0, "POST /orders/:id", "server"],
    [1, "orders.placed publish", "producer"],
    [2, "orders.placed process", "consumer"],
    [2, "orders.placed process", "consumer"],
  ]);
  const [, publish, first, second] = w.spans;
  assert.equal(first.parentSpanId, publish.spanId);
  assert.deepEqual(
    [first.attributes["fw.events.attempt"], second.attributes["fw.events.attempt"]],
    [1, 2],
  );
  assert.equal(first.error, "warehouse busy");
  assert.equal(second.error, undefined);
  assert.ok(first.waitMs! >= 0 && second.waitMs! >= first.waitMs!);
  // the handler's own line (its credential field dropped) and the framework's outcome line
  assert.deepEqual(first.logs.map((l) => [l.level, l.message]), [
    ["info", "shipping"],
    ["warn", "message handled"],
  ]);
  assert.deepEqual(first.logs[0].fields, { order: "o-1" });
  assert.match(JSON.stringify(first.logs[1].fields), /"outcome":"retry"/);
  assert.match(JSON.stringify(second.logs[1].fields), /"outcome":"acked"/);
}

Deno.test("dashboard Traces with telemetry() and no exporter: a request, its publish and each attempt, with their log lines", async () => {
  const { app, done } = makeApp(createLogger({ sink: new MemorySink(), level: "info" }));
  await app.start();
  try {
    assert.equal((await app.request("/orders/o-1", { method: "POST" })).status, 200);
    await done;
    await app.request("/_fw/api/overview"); // the dashboard's own request: not kept
    const w = await theTrace(app);
    checkWaterfall(w);
    assert.match(w.spans[0].spanId, /^[0-9a-f]{16}$/);
  } finally {
    await app.stop();
  }
});

Deno.test("dashboard Traces with an OpenTelemetry SDK provider: the exported ids, and nothing the sampler dropped", async () => {
  const { provider, exporter } = memoryTracing();
  const { app, done } = makeApp(createLogger({ sink: new MemorySink(), level: "info" }), provider);
  await app.start();
  try {
    await app.request("/orders/o-1", { method: "POST" });
    await done;
    const w = await theTrace(app);
    checkWaterfall(w);
    await new Promise((r) => setTimeout(r, 0));
    const exported = new Set(exporter.getFinishedSpans().map((s) => s.spanContext().spanId));
    for (const s of w.spans) assert.ok(exported.has(s.spanId), `${s.name} was exported`);
  } finally {
    await app.stop();
  }
  const off = memoryTracing(new AlwaysOffSampler());
  const dropped = makeApp(createLogger({ sink: new MemorySink(), level: "info" }), off.provider);
  await dropped.app.start();
  try {
    await dropped.app.request("/orders/o-1", { method: "POST" });
    await dropped.done;
    const list = await (await dropped.app.request("/_fw/api/traces")).json();
    assert.deepEqual(list, { available: true, items: [] });
  } finally {
    await dropped.app.stop();
  }
});

Deno.test("dashboard Traces without telemetry(): not available, and nothing traced", async () => {
  const app = application({ logger: createLogger({ level: "silent" }) })
    .use(dashboard({ secure: false }));
  await app.warmup();
  assert.equal(app.context.tracer?.enabled, false);
  assert.deepEqual(await (await app.request("/_fw/api/traces")).json(), {
    available: false,
    items: [],
  });
  await app.stop();
});

Deno.test("dashboard Schedules shows the cron schedules of events() with their last run", async () => {
  const clock = new ManualClock(Date.UTC(2030, 0, 1));
  const report = schedule("nightly-report").options({ cron: "0 3 * * *" }).handle(() => {});
  const app = application({ clock, logger: createLogger({ level: "silent" }) })
    .use(dashboard({ secure: false }))
    .use(events({ autoScan: false, brokerPort: false, schedules: [report] }));
  assert.deepEqual(await (await app.request("/_fw/api/schedules")).json(), {
    available: false,
    items: [],
  });
  await app.start();
  try {
    await clock.advance(3 * 3600_000 + 250);
    const s = await (await app.request("/_fw/api/schedules")).json();
    assert.deepEqual(s, {
      available: true,
      items: [{
        name: "nightly-report",
        every: "0 3 * * *",
        next: "2030-01-02T03:00:00.000Z",
        lastRun: "2030-01-01T03:00:00.000Z",
        outcome: "ok",
        attempts: 1,
        durationMs: 0,
        running: 0,
      }],
    });
  } finally {
    await app.stop();
  }
});
