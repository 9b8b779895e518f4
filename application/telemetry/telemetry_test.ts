import assert from "node:assert/strict";
import {
  type DataPoint,
  type Histogram,
  MeterProvider,
  MetricReader,
} from "@opentelemetry/sdk-metrics";
import { Int } from "@fw/runtime";
import { endpoint } from "../endpoint.ts";
import { telemetry } from "./telemetry.ts";
import { get, serve } from "../testdata/policy_app.ts";

/** An in-memory reader: `collect()` on demand. */
class TestReader extends MetricReader {
  protected onForceFlush(): Promise<void> {
    return Promise.resolve();
  }
  protected onShutdown(): Promise<void> {
    return Promise.resolve();
  }
}

async function points(reader: TestReader, name: string): Promise<DataPoint<unknown>[]> {
  const { resourceMetrics } = await reader.collect();
  for (const scope of resourceMetrics.scopeMetrics) {
    for (const metric of scope.metrics) {
      if (metric.descriptor.name === name) return metric.dataPoints as DataPoint<unknown>[];
    }
  }
  return [];
}

function byAttributes(list: DataPoint<unknown>[]): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const p of list) {
    const a = p.attributes;
    const key = `${a["http.request.method"]} ${a["http.route"] ?? "-"} ${
      a["http.response.status_code"]
    }`;
    out[key] = typeof p.value === "number" ? p.value : (p.value as Histogram).count;
  }
  return out;
}

Deno.test("telemetry() records HTTP request count and duration by method, route and status", async () => {
  const reader = new TestReader();
  const provider = new MeterProvider({ readers: [reader] });
  const t = await serve({
    "GET /users/:id": endpoint().params({ id: Int }).handle((c) => ({ id: c.params.id })),
  }, { plugins: [telemetry({ meterProvider: provider })] });
  try {
    for (const path of ["/users/1", "/users/2", "/users/x", "/nothing"]) {
      await get(t.url + path);
    }
    assert.deepEqual(byAttributes(await points(reader, "http.server.request.count")), {
      "GET /users/:id 200": 2,
      "GET /users/:id 400": 1,
      "GET - 404": 1,
    });
    const durations = await points(reader, "http.server.request.duration");
    assert.deepEqual(byAttributes(durations), {
      "GET /users/:id 200": 2,
      "GET /users/:id 400": 1,
      "GET - 404": 1,
    });
    assert.ok(durations.every((p) => ((p.value as Histogram).sum ?? -1) >= 0));
  } finally {
    await t.stop();
    await provider.shutdown();
  }
});

Deno.test("telemetry() makes ctx.meter an OpenTelemetry meter for other plugins", async () => {
  const reader = new TestReader();
  const provider = new MeterProvider({ readers: [reader] });
  const t = await serve({}, {
    plugins: [telemetry({ meterProvider: provider, http: false })],
  });
  try {
    const meter = t.app.context.meter;
    meter.counter("events.publish.order.created").add();
    meter.counter("events.publish.order.created").add(2, { transport: "memory" });
    meter.histogram("events.handle.order.created.duration", { unit: "ms" }).record(12);
    const published = await points(reader, "events.publish.order.created");
    assert.deepEqual(published.map((p) => p.value).sort(), [1, 2]);
    const handled = await points(reader, "events.handle.order.created.duration");
    assert.equal((handled[0].value as Histogram).sum, 12, "histogram sum");
    await get(`${t.url}/nothing`);
    assert.deepEqual(await points(reader, "http.server.request.count"), []);
  } finally {
    await t.stop();
    await provider.shutdown();
  }
});

Deno.test("telemetry() rejects a meterProvider without getMeter()", () => {
  // deno-lint-ignore no-explicit-any
  assert.throws(() => telemetry({ meterProvider: {} as any }), /"meterProvider"/);
});
