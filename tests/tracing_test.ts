/**
 * Distributed tracing on the in-process memory broker: one trace from the HTTP request through
 * the publish to each delivery attempt, sampling honoured on every hop, log lines that name
 * their span, and the request span's events (validation, 5xx, streams).
 */

import assert from "node:assert/strict";
import { AlwaysOffSampler, AlwaysOnSampler, ParentBasedSampler } from "@opentelemetry/sdk-trace";
import { application } from "@fw/application";
import { telemetry } from "@fw/application/telemetry";
import { events, getPublisher, handler, Int, schedule, topic } from "@fw/events";
import { createLogger, ManualClock } from "@fw/runtime";
import { checkTrace, memoryTracing, parentOf, roundTrip } from "./_tracing.ts";

Deno.test("tracing: request -> publish -> two attempts -> ack is one trace on the memory broker", async () => {
  const { spans, status, logs } = await roundTrip();
  assert.equal(status, 200);
  const { server, attempts } = checkTrace(spans, "memory");
  // Log lines written inside a span carry its ids.
  const placed = logs.records.find((r) => r.message === "order placed");
  assert.equal(placed?.fields.trace_id, server.spanContext().traceId);
  assert.equal(placed?.fields.span_id, server.spanContext().spanId);
  const second = logs.records.find((r) => r.message === "shipping" && r.fields.attempt === 2);
  assert.equal(second?.fields.span_id, attempts[1].spanContext().spanId);
  // The handler's context and the completion line name the same trace.
  const handled = logs.records.filter((r) => r.message === "message handled");
  assert.deepEqual(
    handled.map((r) => [r.fields.traceId, r.fields.trace_id, r.fields.span_id]),
    attempts.map((a) => [a.spanContext().traceId, a.spanContext().traceId, a.spanContext().spanId]),
  );
});

Deno.test("tracing: a valid incoming traceparent is continued", async () => {
  const { spans } = await roundTrip({
    traceparent: "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01",
  });
  const { server, attempts } = checkTrace(spans, "memory");
  assert.equal(server.spanContext().traceId, "4bf92f3577b34da6a3ce929d0e0e4736");
  assert.equal(server.parentSpanContext?.spanId, "00f067aa0ba902b7");
  assert.equal(attempts[1].spanContext().traceId, "4bf92f3577b34da6a3ce929d0e0e4736");
});

Deno.test("tracing: an unsampled request makes no span on any hop (parent-based sampling)", async () => {
  const { spans, status } = await roundTrip({
    sampler: new ParentBasedSampler({ root: new AlwaysOnSampler() }),
    traceparent: "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-00",
  });
  assert.equal(status, 200);
  assert.deepEqual(spans.map((s) => s.name), []);
});

Deno.test("tracing: a root sampler that drops the request drops the whole trace", async () => {
  const { spans, status, logs } = await roundTrip({
    sampler: new ParentBasedSampler({ root: new AlwaysOffSampler() }),
  });
  assert.equal(status, 200);
  assert.deepEqual(spans.map((s) => s.name), []);
  // Both attempts ran (the handler's log lines), untraced.
  assert.equal(logs.records.filter((r) => r.message === "shipping").length, 2);
});

Deno.test("tracing: a dead letter's publish span links to the original message; a dropped delivery has its span", async () => {
  const { provider, exporter } = memoryTracing();
  const Job = topic("jobs.run", { n: Int });
  let release!: () => void;
  const gate = new Promise<void>((resolve) => release = resolve);
  const app = application({ logger: createLogger({ level: "silent" }) })
    .use(telemetry({ tracerProvider: provider, http: false }))
    .use(events({
      autoScan: false,
      brokerPort: false,
      handlers: [
        handler(Job).options({ group: "doomed", maxRetries: 0, jitter: 0 }).handle(() => {
          throw new Error("always fails");
        }),
        handler(Job).options({ group: "narrow", concurrency: 1, queueLimit: 1, overflow: "drop" })
          .handle(() => gate),
      ],
    }));
  await app.start();
  try {
    const publish = getPublisher(Job);
    for (let n = 1; n <= 3; n++) await publish({ n });
    release();
    const spans = () => exporter.getFinishedSpans();
    for (
      let i = 0;
      i < 300 && spans().filter((s) => s.name === "jobs.run.dlq publish").length < 3;
      i++
    ) {
      await new Promise((r) => setTimeout(r, 10));
    }
    const [first] = spans().filter((s) => s.name === "jobs.run publish");
    const attempt = spans().find((s) =>
      s.name === "jobs.run process" && s.attributes["messaging.consumer.group.name"] === "doomed" &&
      s.spanContext().traceId === first.spanContext().traceId
    )!;
    assert.equal(attempt.attributes["fw.events.outcome"], "dead-lettered");
    const dead = spans().find((s) =>
      s.name === "jobs.run.dlq publish" && s.spanContext().traceId === first.spanContext().traceId
    )!;
    assert.equal(dead.kind, 3);
    assert.equal(parentOf(dead), attempt.spanContext().spanId, "child of the failed attempt");
    assert.deepEqual(dead.links.map((l) => l.context.spanId), [first.spanContext().spanId]);
    const dropped = spans().filter((s) => s.attributes["fw.events.outcome"] === "dropped");
    assert.equal(dropped.length, 1, "the third message found the narrow queue full");
    assert.equal(dropped[0].attributes["messaging.consumer.group.name"], "narrow");
  } finally {
    await app.stop();
    await provider.shutdown();
  }
});

Deno.test("tracing: each schedule attempt is a span of its own trace that the job's publishes join", async () => {
  const { provider, exporter } = memoryTracing();
  const clock = new ManualClock(Date.UTC(2030, 0, 1));
  const Tick = topic("clock.tick", { n: Int });
  let runs = 0;
  const plugin = events({
    autoScan: false,
    brokerPort: false,
    handlers: [handler(Tick).options({ group: "t" }).handle(() => {})],
    schedules: [
      schedule("nightly").options({ cron: "* * * * *", jitter: 0, maxRetries: 1 })
        .handle(async (run) => {
          runs++;
          await getPublisher(Tick)({ n: run.attempt });
          if (run.attempt === 1) throw new Error("first attempt fails");
        }),
    ],
  });
  const app = application({ clock, logger: createLogger({ level: "silent" }) })
    .use(telemetry({ tracerProvider: provider, http: false }))
    .use(plugin);
  await app.start();
  try {
    await clock.advance(60_000); // the tick: attempt 1 fails
    await clock.advance(1_000); // the retry after 1 s succeeds
  } finally {
    await app.stop();
  }
  await provider.forceFlush();
  const spans = exporter.getFinishedSpans();
  await provider.shutdown();
  assert.equal(runs, 2);
  const attempts = spans.filter((s) => s.name === "nightly run");
  assert.deepEqual(
    attempts.map((s) => [s.attributes["fw.schedule.attempt"], s.attributes["fw.events.outcome"]]),
    [[1, "failed"], [2, "acked"]],
  );
  assert.equal(attempts[0].attributes["fw.schedule.cron"], "* * * * *");
  assert.equal(attempts[0].attributes["fw.schedule.scheduled_at"], "2030-01-01T00:01:00.000Z");
  assert.equal(attempts[0].status.code, 2, "a failed attempt is an ERROR span");
  assert.equal(attempts[0].events.find((e) => e.name === "exception")?.name, "exception");
  assert.equal(attempts[0].parentSpanContext, undefined, "each attempt starts a new trace");
  const publishes = spans.filter((s) => s.name === "clock.tick publish");
  assert.deepEqual(
    publishes.map(parentOf),
    attempts.map((s) => s.spanContext().spanId),
    "what a run publishes is a child of its attempt",
  );
});
