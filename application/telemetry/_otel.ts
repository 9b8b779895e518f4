/**
 * The OpenTelemetry adapter of `telemetry()`: the one module that imports
 * `npm:@opentelemetry/api`, loaded by the plugin's `setup` only. It gives the global meter and
 * tracer providers (Deno's built-in exporter serves them under `OTEL_DENO=true`) and backs the
 * runtime {@linkcode Tracer} with an OpenTelemetry tracer. Internal.
 *
 * @module
 */

import {
  type Attributes,
  type Context,
  context as otelContext,
  createTraceState,
  type Link,
  metrics,
  ROOT_CONTEXT,
  type Span as OtelSpan,
  type SpanContext as OtelSpanContext,
  SpanKind,
  SpanStatusCode,
  trace,
  type Tracer as OtelTracer,
} from "@opentelemetry/api";
import type {
  Span,
  SpanAttributes,
  SpanAttributeValue,
  SpanContext,
  StartSpanOptions,
  Tracer,
} from "@fw/runtime";
import { currentSpan } from "@fw/runtime";
import type { TelemetryMeterProvider } from "./_meter.ts";

/** The global OpenTelemetry meter provider. */
export function globalMeterProvider(): TelemetryMeterProvider {
  return metrics.getMeterProvider();
}

/** The part of an OpenTelemetry `TracerProvider` that `telemetry()` uses. */
export interface OtelTracerProvider {
  /** The tracer of an instrumentation scope. */
  getTracer(name: string, version?: string): unknown;
}

const KINDS: Readonly<Record<string, SpanKind>> = {
  internal: SpanKind.INTERNAL,
  server: SpanKind.SERVER,
  client: SpanKind.CLIENT,
  producer: SpanKind.PRODUCER,
  consumer: SpanKind.CONSUMER,
};

/** An OpenTelemetry span seen through the runtime {@linkcode Span} interface. */
class OtelSpanAdapter implements Span {
  readonly span: OtelSpan;
  #context: SpanContext | undefined = undefined;

  constructor(span: OtelSpan) {
    this.span = span;
  }

  // Read on first use: a delivery span whose handler neither publishes nor logs never asks.
  get context(): SpanContext {
    if (this.#context !== undefined) return this.#context;
    const sc = this.span.spanContext();
    const state = sc.traceState?.serialize();
    return this.#context = state
      ? { traceId: sc.traceId, spanId: sc.spanId, traceFlags: sc.traceFlags, traceState: state }
      : { traceId: sc.traceId, spanId: sc.spanId, traceFlags: sc.traceFlags };
  }

  get recording(): boolean {
    return this.span.isRecording();
  }

  setAttribute(key: string, value: SpanAttributeValue): void {
    this.span.setAttribute(key, value as string);
  }
  addEvent(name: string, attributes?: SpanAttributes): void {
    this.span.addEvent(name, attributes as Attributes | undefined);
  }
  recordException(error: unknown): void {
    if (!this.span.isRecording()) return;
    this.span.recordException(
      error instanceof Error ? error : { name: "Error", message: String(error) },
    );
  }
  setError(message: string): void {
    this.span.setStatus({ code: SpanStatusCode.ERROR, message });
  }
  updateName(name: string): void {
    this.span.updateName(name);
  }
  end(): void {
    this.span.end();
  }
}

/** A runtime span context as an OpenTelemetry one. */
function otelSpanContext(sc: SpanContext): OtelSpanContext {
  return {
    traceId: sc.traceId,
    spanId: sc.spanId,
    traceFlags: sc.traceFlags,
    isRemote: sc.isRemote ?? true,
    ...(sc.traceState ? { traceState: createTraceState(sc.traceState) } : {}),
  };
}

/** The OpenTelemetry context a span starts in. */
function parentContext(parent: Span | SpanContext | null | undefined, server: boolean): Context {
  if (parent === null) return ROOT_CONTEXT;
  const p = parent ?? currentSpan();
  // No fw span: the active OpenTelemetry context (under OTEL_DENO, Deno's own request span).
  if (p === undefined) return otelContext.active();
  if (p instanceof OtelSpanAdapter) return trace.setSpan(otelContext.active(), p.span);
  const sc = "spanId" in p ? p : p.context;
  const active = otelContext.active();
  // A request whose remote parent the runtime's own instrumentation already continued
  // (Deno.serve's span under OTEL_DENO, of the same trace): nest under that span, not beside it.
  if (server && sc.isRemote && trace.getSpan(active)?.spanContext().traceId === sc.traceId) {
    return active;
  }
  return trace.setSpanContext(active, otelSpanContext(sc));
}

/** The runtime {@linkcode Tracer} backed by an OpenTelemetry tracer. */
class OtelTracerAdapter implements Tracer {
  readonly enabled = true;
  readonly #tracer: OtelTracer;

  constructor(tracer: OtelTracer) {
    this.#tracer = tracer;
  }

  startSpan(name: string, options: StartSpanOptions = {}): Span {
    const links: Link[] | undefined = options.links?.map((l) => ({ context: otelSpanContext(l) }));
    const span = this.#tracer.startSpan(name, {
      kind: KINDS[options.kind ?? "internal"],
      ...(options.attributes ? { attributes: options.attributes as Attributes } : {}),
      ...(links ? { links } : {}),
    }, parentContext(options.parent, options.kind === "server"));
    return new OtelSpanAdapter(span);
  }
}

/**
 * A runtime tracer from an OpenTelemetry tracer provider (default: the global one).
 *
 * @param provider The provider, or `undefined` for the global one.
 * @param name The instrumentation scope's name.
 * @returns The tracer.
 */
export function otelTracer(provider: OtelTracerProvider | undefined, name: string): Tracer {
  const source = provider ?? trace.getTracerProvider();
  return new OtelTracerAdapter(source.getTracer(name) as OtelTracer);
}
