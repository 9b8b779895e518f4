import assert from "node:assert/strict";
import {
  type DataPoint,
  type Histogram,
  MeterProvider,
  MetricReader,
} from "@opentelemetry/sdk-metrics";
import { application } from "@fw/application";
import { telemetry } from "@fw/application/telemetry";
import { events, getPublisher, handler, Int, topic } from "@fw/events";
import { createLogger, MemorySink } from "@fw/runtime";

class TestReader extends MetricReader {
  protected onForceFlush(): Promise<void> {
    return Promise.resolve();
  }
  protected onShutdown(): Promise<void> {
    return Promise.resolve();
  }
}

async function totals(reader: TestReader): Promise<Record<string, number>> {
  const out: Record<string, number> = {};
  const { resourceMetrics } = await reader.collect();
  for (const scope of resourceMetrics.scopeMetrics) {
    for (const metric of scope.metrics) {
      for (const p of metric.dataPoints as DataPoint<unknown>[]) {
        const v = typeof p.value === "number" ? p.value : (p.value as Histogram).count;
        out[metric.descriptor.name] = (out[metric.descriptor.name] ?? 0) + v;
      }
    }
  }
  return out;
}

const Paid = topic("billing.paid", { amount: Int });

Deno.test("telemetry() receives the seven event metrics of spec 6.3 and the completion log", async () => {
  const reader = new TestReader();
  const sink = new MemorySink();
  let failFirst = true;
  const app = application({ logger: createLogger({ sink }) })
    .use(telemetry({ meterProvider: new MeterProvider({ readers: [reader] }), http: false }))
    .use(events({
      autoScan: false,
      brokerPort: false,
      handlers: [
        handler(Paid).options({ group: "ledger", maxRetries: 0, jitter: 0 }).handle((m) => {
          if (m.payload.amount < 0) throw new Error("negative amount");
        }),
        handler(Paid).options({ group: "flaky", maxRetries: 1, maxBackoff: 10, jitter: 0 }).handle(
          () => {
            if (failFirst) {
              failFirst = false;
              throw new Error("first try fails");
            }
          },
        ),
      ],
    }));
  await app.start();
  try {
    const publish = getPublisher(Paid);
    await publish({ amount: 5 }, { traceId: "0af7651916cd43dd8448eb211c80319c" });
    await publish({ amount: -1 });
    await assert.rejects(publish({ amount: 1.5 }));
    const end = Date.now() + 5000;
    while ((await totals(reader))["events.handle.billing.paid.success"] !== 3) {
      if (Date.now() > end) throw new Error(JSON.stringify(await totals(reader)));
      await new Promise((r) => setTimeout(r, 10));
    }
    const t = await totals(reader);
    assert.equal(t["events.publish.billing.paid"], 2);
    assert.equal(t["events.publish.billing.paid.error"], 1);
    // ledger: 5 ok, -1 fails once and is dead-lettered; flaky: first fails then retried, -1 ok.
    assert.equal(t["events.handle.billing.paid.success"], 3);
    assert.equal(t["events.handle.billing.paid.failure"], 2);
    assert.equal(t["events.handle.billing.paid.retry"], 1);
    assert.equal(t["events.handle.billing.paid.dlq"], 1);
    assert.equal(t["events.handle.billing.paid.duration"], 5);
    const line = sink.records.find((r) =>
      r.message === "message handled" && r.fields.traceId === "0af7651916cd43dd8448eb211c80319c"
    );
    assert.ok(line, "a completion entry carries the trace id");
    assert.deepEqual(Object.keys(line!.fields.event as object).slice(0, 5), [
      "topic",
      "messageId",
      "attempt",
      "outcome",
      "duration",
    ]);
  } finally {
    await app.stop();
  }
});
