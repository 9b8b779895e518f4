/**
 * The traced rows of `bench:http` and `bench:events`: an OpenTelemetry SDK tracer provider with
 * an always-on sampler and a batching span processor whose exporter counts and discards the
 * spans (what is measured is the cost of making, recording and batching them, not a network).
 *
 * @module
 */

import type { Tracer } from "@fw/runtime";
import { application } from "@fw/application";
import { telemetry } from "@fw/application/telemetry";
import {
  AlwaysOnSampler,
  BatchSpanProcessor,
  type ReadableSpan,
  type SpanExporter,
  TracerProvider,
} from "@opentelemetry/sdk-trace";

/** Spans the benchmark exporter received. */
export let exportedSpans = 0;

const discard: SpanExporter = {
  export(spans: ReadableSpan[], done: (result: { code: number }) => void): void {
    exportedSpans += spans.length;
    done({ code: 0 });
  },
  shutdown: () => Promise.resolve(),
  forceFlush: () => Promise.resolve(),
};

/**
 * A tracer provider that samples everything and batches into a discarding exporter.
 *
 * @returns The provider.
 */
export function benchTracerProvider(): TracerProvider {
  return new TracerProvider({
    sampler: new AlwaysOnSampler(),
    spanProcessors: [new BatchSpanProcessor({ exporter: discard })],
  });
}

/**
 * The runtime tracer `telemetry()` makes from {@linkcode benchTracerProvider}, for a bare
 * `EventBus`.
 *
 * @returns The tracer and the provider (shut it down after the run).
 */
export async function benchTracer(): Promise<{ tracer: Tracer; provider: TracerProvider }> {
  const provider = benchTracerProvider();
  const app = application().use(telemetry({ tracerProvider: provider, http: false }));
  await app.warmup();
  return { tracer: app.context.tracer!, provider };
}

// The OpenTelemetry context key of the active span (`createContextKey` is `Symbol.for`).
const SPAN_CONTEXT_KEY = Symbol.for("OpenTelemetry Context Key SPAN");

/** A context holding one span: what the API's `trace.setSpan()` builds, without the API. */
function contextWith(span: unknown) {
  const context = {
    getValue: (key: symbol) => key === SPAN_CONTEXT_KEY ? span : undefined,
    setValue: () => context,
    deleteValue: () => context,
  };
  return context;
}

/**
 * The platform floor of tracing an event: the same PRODUCER and CONSUMER span fw makes for one
 * message (names, kinds, parentage and attributes), made straight through the SDK with no fw
 * code around them. A benchmark row that adds this to an untraced run shows what any
 * instrumentation on this SDK pays at the least.
 *
 * @param provider The provider (from {@linkcode benchTracerProvider}).
 * @returns A function making and ending the two spans of one message.
 */
export function sdkMessageSpans(provider: TracerProvider): (topic: string, id: string) => void {
  const tracer = provider.getTracer("fw-bench-floor");
  return (topic, id) => {
    const publish = tracer.startSpan(`${topic} publish`, {
      kind: 3, // PRODUCER
      attributes: {
        "messaging.system": "memory",
        "messaging.destination.name": topic,
        "messaging.message.id": id,
        "messaging.operation.type": "send",
        "messaging.operation.name": "publish",
      },
    });
    const process = tracer.startSpan(`${topic} process`, {
      kind: 4, // CONSUMER
      attributes: {
        "messaging.system": "memory",
        "messaging.destination.name": topic,
        "messaging.message.id": id,
        "messaging.operation.type": "process",
        "messaging.operation.name": "process",
        "messaging.consumer.group.name": "bench",
        "fw.events.attempt": 1,
        "fw.events.handler": "default",
      },
    }, contextWith(publish) as never);
    publish.end();
    process.setAttribute("fw.events.outcome", "acked");
    process.end();
  };
}

/**
 * The platform floor of tracing a request: the SERVER span fw makes for `GET /users/:id` (name,
 * kind and attributes), made straight through the SDK with no fw code around it.
 *
 * @param provider The provider (from {@linkcode benchTracerProvider}).
 * @returns A function making and ending the span of one request.
 */
export function sdkRequestSpan(provider: TracerProvider): (req: Request) => void {
  const tracer = provider.getTracer("fw-bench-floor");
  return (req) => {
    const url = new URL(req.url);
    const span = tracer.startSpan("GET /users/:id", {
      kind: 1, // SERVER
      attributes: {
        "http.request.method": req.method,
        "http.route": "/users/:id",
        "url.path": url.pathname,
        "url.scheme": "http",
        "server.address": url.hostname,
        "server.port": Number(url.port),
        "user_agent.original": req.headers.get("user-agent") ?? "",
      },
    });
    span.setAttribute("http.response.status_code", 200);
    span.end();
  };
}
