/**
 * The traced round trip shared by the tracing tests: `POST /orders/:id` publishes `orders.placed`,
 * whose handler (`events/ship.on.ts#ship`, group `shipping`) fails its first attempt and succeeds
 * on the second. Spans go to the OpenTelemetry SDK's in-memory exporter; the checks assert one
 * trace with the parentage and attribute names a trace backend shows.
 */

import assert from "node:assert/strict";
import {
  InMemorySpanExporter,
  type ReadableSpan,
  type Sampler,
  SimpleSpanProcessor,
  TracerProvider,
} from "@opentelemetry/sdk-trace";
import { api, application, endpoint } from "@fw/application";
import { telemetry } from "@fw/application/telemetry";
import { events, getPublisher, handler, Int, topic, type Transport } from "@fw/events";
import { createLogger, MemorySink } from "@fw/runtime";

/** The topic of the round trip. */
export const Ordered = topic("orders.placed", { id: String, total: Int });

/** An SDK tracer provider that keeps every ended span in memory. */
export function memoryTracing(sampler?: Sampler): {
  provider: TracerProvider;
  exporter: InMemorySpanExporter;
} {
  const exporter = new InMemorySpanExporter();
  const provider = new TracerProvider({
    spanProcessors: [new SimpleSpanProcessor({ exporter })],
    ...(sampler ? { sampler } : {}),
  });
  return { provider, exporter };
}

/** Options of {@linkcode roundTrip}. */
export interface RoundTripOptions {
  /** The transport (default: the in-process memory broker). */
  readonly transport?: Transport;
  /** Sampler of the provider (default: always on, parent-based). */
  readonly sampler?: Sampler;
  /** `traceparent` of the incoming request. */
  readonly traceparent?: string;
  /** Publish inside this callback (the PostgreSQL outbox passes a `tx`). */
  readonly publishWith?: (publish: (tx?: unknown) => Promise<unknown>) => Promise<unknown>;
  /** How long to wait for the second attempt (default 15 s). */
  readonly timeoutMs?: number;
}

/** What a round trip left behind. */
export interface RoundTrip {
  /** The finished spans. */
  readonly spans: readonly ReadableSpan[];
  /** The response status. */
  readonly status: number;
  /** Log records written. */
  readonly logs: MemorySink;
}

/**
 * Runs the round trip on an application with `telemetry()` and `events()`.
 *
 * @param options Transport, sampler, incoming trace context.
 * @returns The spans (once both attempts ended) and the response status.
 */
export async function roundTrip(options: RoundTripOptions = {}): Promise<RoundTrip> {
  const { provider, exporter } = memoryTracing(options.sampler);
  const logs = new MemorySink();
  const logger = createLogger({ sink: logs, level: "info" });
  const attempts = new Map<string, number>();
  let finished!: () => void;
  const done = new Promise<void>((resolve) => finished = resolve);
  const ship = handler(Ordered)
    .options({ group: "shipping", maxRetries: 2, maxBackoff: 20, jitter: 0, timeout: 5000 })
    .handle((m) => {
      const n = (attempts.get(m.payload.id) ?? 0) + 1;
      attempts.set(m.payload.id, n);
      logger.info("shipping", { order: m.payload.id, attempt: n });
      if (n === 1) throw new Error("warehouse busy");
      finished();
    });
  const place = endpoint().params({ id: String }).body({ total: Int }).handle(async (ctx) => {
    const body = await ctx.body();
    logger.info("order placed");
    const publish = (tx?: unknown) =>
      getPublisher(Ordered)({ id: ctx.params.id, total: body.total }, tx ? { tx } : {});
    await (options.publishWith ? options.publishWith(publish) : publish());
    return { accepted: true };
  });
  const app = application({ logger })
    .use(telemetry({ tracerProvider: provider, http: false }))
    .use(events({
      brokerPort: false,
      manifest: { folder: "events", modules: { "ship.on.ts": { ship } } },
      ...(options.transport ? { transports: { main: options.transport } } : {}),
    }))
    .use(api({ autoScan: false }).route("POST", "/orders/:id", place));
  await app.start();
  try {
    const headers: Record<string, string> = {
      "content-type": "application/json",
      "user-agent": "trace-test/1",
    };
    if (options.traceparent) headers.traceparent = options.traceparent;
    const res = await app.request("/orders/o-1", {
      method: "POST",
      headers,
      body: JSON.stringify({ total: 42 }),
    });
    await res.body?.cancel();
    if (res.status === 200) await deadline(done, options.timeoutMs ?? 15_000, "the second attempt");
    // Sampled: the second attempt's span ends right after its handler returned.
    if (options.sampler === undefined) {
      await waitFor(() => exporter.getFinishedSpans().filter(isProcess).length >= 2);
    }
    return { spans: exporter.getFinishedSpans(), status: res.status, logs };
  } finally {
    await app.stop();
    await provider.shutdown();
  }
}

function isProcess(s: ReadableSpan): boolean {
  return s.name.endsWith(" process");
}

async function deadline(p: Promise<void>, ms: number, what: string): Promise<void> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  try {
    await Promise.race([
      p,
      new Promise((_, reject) => {
        timer = setTimeout(() => reject(new Error(`Timed out waiting for ${what}`)), ms);
      }),
    ]);
  } finally {
    clearTimeout(timer);
  }
}

/** Polls (briefly) until the spans of the settled attempts have ended. */
async function waitFor(check: () => boolean): Promise<void> {
  for (let i = 0; i < 200 && !check(); i++) await new Promise((r) => setTimeout(r, 10));
}

/** The span's parent span id (SDK 2: `parentSpanContext`). */
export function parentOf(span: ReadableSpan): string | undefined {
  return span.parentSpanContext?.spanId;
}

/**
 * Checks the round trip's trace: request -> publish -> two attempts (retry, then acked), all in
 * one trace, with the attribute names of the semantic conventions.
 *
 * @param spans The finished spans.
 * @param system The expected `messaging.system`.
 * @returns The spans by role.
 */
export function checkTrace(
  spans: readonly ReadableSpan[],
  system: string,
): { server: ReadableSpan; publish: ReadableSpan; attempts: ReadableSpan[] } {
  const server = spans.find((s) => s.name === "POST /orders/:id");
  assert.ok(server, `a server span; got ${spans.map((s) => s.name).join(", ")}`);
  assert.equal(server.kind, 1 /* SERVER */);
  const a = server.attributes;
  assert.equal(a["http.request.method"], "POST");
  assert.equal(a["http.route"], "/orders/:id");
  assert.equal(a["http.response.status_code"], 200);
  assert.equal(a["url.path"], "/orders/o-1");
  assert.equal(a["url.scheme"], "http");
  assert.equal(a["server.address"], "localhost");
  assert.equal(a["user_agent.original"], "trace-test/1");
  const trace = server.spanContext().traceId;

  const publish = spans.find((s) => s.name === "orders.placed publish");
  assert.ok(publish, "a publish span");
  assert.equal(publish.kind, 3 /* PRODUCER */);
  assert.equal(publish.spanContext().traceId, trace);
  assert.equal(parentOf(publish), server.spanContext().spanId);
  assert.equal(publish.attributes["messaging.system"], system);
  assert.equal(publish.attributes["messaging.destination.name"], "orders.placed");
  assert.equal(publish.attributes["messaging.operation.type"], "send");
  assert.equal(typeof publish.attributes["messaging.message.id"], "string");

  const attempts = spans.filter((s) => s.name === "orders.placed process")
    .sort((x, y) =>
      Number(x.attributes["fw.events.attempt"]) - Number(y.attributes["fw.events.attempt"])
    );
  assert.equal(attempts.length, 2, "two delivery attempts");
  for (const [i, s] of attempts.entries()) {
    assert.equal(s.kind, 4 /* CONSUMER */);
    assert.equal(s.spanContext().traceId, trace, "the attempt is in the request's trace");
    assert.equal(parentOf(s), publish.spanContext().spanId, "child of the publish");
    assert.equal(s.attributes["fw.events.attempt"], i + 1);
    assert.equal(s.attributes["messaging.system"], system);
    assert.equal(s.attributes["messaging.operation.type"], "process");
    assert.equal(s.attributes["messaging.message.id"], publish.attributes["messaging.message.id"]);
    assert.equal(s.attributes["messaging.consumer.group.name"], "shipping");
    assert.equal(s.attributes["code.file.path"], "events/ship.on.ts");
  }
  assert.equal(attempts[0].attributes["fw.events.outcome"], "retry");
  assert.equal(attempts[0].status.code, 2 /* ERROR */);
  assert.equal(
    attempts[0].events.find((e) => e.name === "exception")?.attributes?.["exception.message"],
    "warehouse busy",
  );
  assert.equal(attempts[1].attributes["fw.events.outcome"], "acked");
  assert.equal(attempts[1].status.code, 0 /* UNSET */);
  return { server, publish, attempts };
}
