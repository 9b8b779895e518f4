/**
 * The traced rows of `bench:http` and `bench:events`: an OpenTelemetry SDK tracer provider with
 * an always-on sampler and a batching span processor whose exporter counts and discards the
 * spans (what is measured is the cost of making, recording and batching them, not a network).
 *
 * @module
 */

import type { Tracer } from "@fw/runtime";
import { application, telemetry } from "@fw/application";
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
