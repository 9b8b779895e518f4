/**
 * Distributed tracing on the in-process memory broker: one trace from the HTTP request through
 * the publish to each delivery attempt, sampling honoured on every hop, log lines that name
 * their span, and the request span's events (validation, 5xx, streams).
 */

import assert from "node:assert/strict";
import { AlwaysOffSampler, AlwaysOnSampler, ParentBasedSampler } from "@opentelemetry/sdk-trace";
import { checkTrace, roundTrip } from "./_tracing.ts";

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
