/**
 * The dashboard's span processor: a {@linkcode Tracer} it puts in front of the application's
 * tracer (the one `telemetry()` sets), so every span of the app (the request's SERVER span, each
 * publish, each delivery attempt, each schedule run) is also kept, once it ends, in the
 * dashboard's {@linkcode SpanRing}, with the log lines written while it was current.
 *
 * The spans still go to the wrapped tracer. Their identity is its: when it records a span (an
 * OpenTelemetry SDK provider, or Deno's exporter under `OTEL_DENO=true`), the ring keeps the
 * same trace and span ids; a span it sampled out is left alone. When no tracer provider stands
 * behind it (plain `telemetry()`: the global provider makes no spans), the dashboard gives the
 * spans ids of its own, which travel on in messages like any trace context, so the Traces view
 * works without an exporter.
 *
 * Installed only when the dashboard is mounted and the app has a tracer. Internal.
 *
 * @module
 */

import {
  currentSpan,
  isValidSpanContext,
  type Span,
  type SpanAttributes,
  type SpanAttributeValue,
  type SpanContext,
  type SpanKind,
  type SpanLogRecord,
  type StartSpanOptions,
  type Tracer,
} from "@fw/runtime";
import { hidden } from "./_redact.ts";
import type { SpanLogLine, SpanRing } from "./traces.ts";

function hex(bytes: number): string {
  const b = crypto.getRandomValues(new Uint8Array(bytes));
  let out = "";
  for (const x of b) out += (x < 16 ? "0" : "") + x.toString(16);
  return out;
}

const now = () => performance.timeOrigin + performance.now();

/** Log lines a span keeps while it is open. */
const MAX_LOGS = 200;

function contextOf(p: Span | SpanContext | null | undefined): SpanContext | undefined {
  if (p === null || p === undefined) return undefined;
  const sc = "spanId" in p ? p : p.context;
  return isValidSpanContext(sc) ? sc : undefined;
}

/** A span kept in the ring when it ends (and passed on to the wrapped tracer's span). */
class RingSpan implements Span {
  readonly recording = true;
  readonly inner: Span;
  readonly context: SpanContext;
  readonly #ring: SpanRing;
  readonly #parentSpanId: string | undefined;
  readonly #kind: SpanKind;
  readonly #start = now();
  readonly #attributes: Record<string, SpanAttributeValue>;
  readonly #skip: (span: RingSpan) => boolean;
  #name: string;
  #error: string | undefined;
  #ended = false;
  #skipped = false;
  #logs: SpanLogLine[] | undefined;

  constructor(
    inner: Span,
    context: SpanContext,
    name: string,
    options: StartSpanOptions,
    parentSpanId: string | undefined,
    ring: SpanRing,
    skip: (span: RingSpan) => boolean,
  ) {
    this.inner = inner;
    this.context = context;
    this.#name = name;
    this.#kind = options.kind ?? "internal";
    this.#attributes = { ...options.attributes };
    this.#parentSpanId = parentSpanId;
    this.#ring = ring;
    this.#skip = skip;
  }

  /** An attribute set so far. */
  attribute(key: string): SpanAttributeValue | undefined {
    return this.#attributes[key];
  }

  /** The kind. */
  get kind(): SpanKind {
    return this.#kind;
  }

  setAttribute(key: string, value: SpanAttributeValue): void {
    this.#attributes[key] = value;
    this.inner.setAttribute(key, value);
  }
  addEvent(name: string, attributes?: SpanAttributes): void {
    this.inner.addEvent(name, attributes);
  }
  recordException(error: unknown): void {
    this.inner.recordException(error);
  }
  setError(message: string): void {
    this.#error = message;
    this.inner.setError(message);
  }
  updateName(name: string): void {
    this.#name = name;
    this.inner.updateName(name);
  }
  end(): void {
    if (this.#ended) return;
    this.#ended = true;
    this.inner.end();
    this.#skipped = this.#skip(this);
    if (this.#skipped) return;
    this.#ring.onEnd({
      traceId: this.context.traceId,
      spanId: this.context.spanId,
      ...(this.#parentSpanId !== undefined ? { parentSpanId: this.#parentSpanId } : {}),
      name: this.#name,
      kind: this.#kind,
      startTime: this.#start,
      endTime: now(),
      ...(this.#error !== undefined ? { error: this.#error } : {}),
      attributes: this.#attributes,
      ...(this.#logs ? { logs: this.#logs } : {}),
    });
  }
  log(record: SpanLogRecord): void {
    this.inner.log?.(record);
    if (this.#skipped) return;
    let fields: Record<string, unknown> | undefined;
    for (const [k, v] of Object.entries(record.fields)) {
      if (k === "trace_id" || k === "span_id" || hidden(k)) continue;
      (fields ??= {})[k] = v instanceof Error ? `${v.name}: ${v.message}` : v;
    }
    const line: SpanLogLine = {
      time: record.time,
      level: record.level,
      message: record.message,
      ...(fields ? { fields } : {}),
    };
    // kept with the span until it ends (a span that is not kept leaves nothing in the ring)
    if (!this.#ended) {
      const logs = this.#logs ??= [];
      if (logs.length < MAX_LOGS) logs.push(line); // a long stream's span keeps its first lines
    } else if (!this.#skipped) this.#ring.log(this.context.traceId, this.context.spanId, line);
  }
}

/** The tracer the dashboard puts in front of the application's. */
export class RingTracer implements Tracer {
  readonly enabled = true;
  readonly #inner: Tracer;
  readonly #ring: SpanRing;
  readonly #skip: (span: RingSpan) => boolean;

  /**
   * @param inner The application's tracer.
   * @param ring Where finished spans go.
   * @param skipRoutes A path prefix whose requests are not kept (the dashboard's own).
   */
  constructor(inner: Tracer, ring: SpanRing, skipRoutes: () => string) {
    this.#inner = inner;
    this.#ring = ring;
    this.#skip = (span) => {
      if (span.kind !== "server") return false;
      const route = span.attribute("http.route") ?? span.attribute("url.path");
      return typeof route === "string" && route.startsWith(skipRoutes());
    };
  }

  startSpan(name: string, options: StartSpanOptions = {}): Span {
    const given = options.parent;
    const parent = given === undefined ? currentSpan() : given;
    // The wrapped tracer continues from its own span of the parent.
    const innerParent = parent instanceof RingSpan ? parent.inner : parent;
    const inner = this.#inner.startSpan(
      name,
      parent instanceof RingSpan ? { ...options, parent: innerParent } : options,
    );
    const parentContext = contextOf(parent);
    let context: SpanContext;
    if (inner.recording) context = inner.context;
    else {
      const ic = inner.context;
      // A span of its own that is not recording: sampled out by the tracer behind; leave it.
      if (isValidSpanContext(ic) && ic.spanId !== contextOf(innerParent)?.spanId) return inner;
      // No tracer provider behind it (no span of its own): the dashboard names the span.
      context = {
        traceId: parentContext?.traceId ?? hex(16),
        spanId: hex(8),
        traceFlags: parentContext?.traceFlags ?? 1,
        ...(parentContext?.traceState ? { traceState: parentContext.traceState } : {}),
      };
    }
    return new RingSpan(
      inner,
      context,
      name,
      options,
      parentContext?.spanId,
      this.#ring,
      this.#skip,
    );
  }
}
