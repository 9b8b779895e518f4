/**
 * A minimal tracing interface shared by the HTTP and events halves, beside {@linkcode Meter}.
 * The `telemetry()` plugin of `@fw/application` backs it with an OpenTelemetry tracer;
 * {@linkcode noopTracer} is used when tracing is off (it creates nothing and costs one call).
 *
 * The span a piece of work runs in lives in the async context under {@linkcode SPAN_KEY}
 * ({@linkcode currentSpan}), so a publish inside a request or a handler becomes its child and
 * log lines written there carry `trace_id` and `span_id`. Between processes the span context
 * travels as a W3C `traceparent` (and `tracestate`): {@linkcode formatTraceparent},
 * {@linkcode parseTraceparent}.
 *
 * @module
 */

import { tryContext } from "./context.ts";

/** Attribute values a span accepts. */
export type SpanAttributeValue = string | number | boolean | readonly string[];

/** Attributes of a span or a span event. */
export type SpanAttributes = Readonly<Record<string, SpanAttributeValue>>;

/** The identity of a span, as W3C trace context carries it. */
export interface SpanContext {
  /** 32 lower-case hex digits. */
  readonly traceId: string;
  /** 16 lower-case hex digits. */
  readonly spanId: string;
  /** Trace flags; bit 1 (`1`) means sampled. */
  readonly traceFlags: number;
  /** The `tracestate` header value, when there is one. */
  readonly traceState?: string;
  /** True when the context came from another process. */
  readonly isRemote?: boolean;
}

/** What a span stands for (the OpenTelemetry span kinds). */
export type SpanKind = "internal" | "server" | "client" | "producer" | "consumer";

/** Options of {@linkcode Tracer.startSpan}. */
export interface StartSpanOptions {
  /** Kind (default `internal`). */
  readonly kind?: SpanKind;
  /**
   * The parent: a span, a (remote) span context, or `null` for a new trace. When absent, the
   * current span of the async context ({@linkcode currentSpan}) is the parent.
   */
  readonly parent?: Span | SpanContext | null;
  /** Attributes set at the start (samplers see them). */
  readonly attributes?: SpanAttributes;
  /** Spans this one is linked to (a dead letter's span links to the original message). */
  readonly links?: readonly SpanContext[];
}

/** A log line written while a span was current, as the logger hands it to {@linkcode Span.log}. */
export interface SpanLogRecord {
  /** Level name. */
  readonly level: string;
  /** The message. */
  readonly message: string;
  /** The record's fields. */
  readonly fields: Readonly<Record<string, unknown>>;
  /** Milliseconds since the epoch. */
  readonly time: number;
}

/** One span. Every method is a no-op on a span that is not recording. */
export interface Span {
  /** The span's identity (also for an unsampled span, so its decision travels on). */
  readonly context: SpanContext;
  /** True when the span records (it was sampled); callers may skip building attributes. */
  readonly recording: boolean;
  /** Sets one attribute. */
  setAttribute(key: string, value: SpanAttributeValue): void;
  /** Adds a timestamped event. */
  addEvent(name: string, attributes?: SpanAttributes): void;
  /** Records an exception event (type, message, stack). */
  recordException(error: unknown): void;
  /** Marks the span as failed, with a description. */
  setError(message: string): void;
  /** Renames the span (once the route pattern is known). */
  updateName(name: string): void;
  /** Ends the span; later calls are ignored. */
  end(): void;
  /**
   * Takes each log line the application's logger writes while this span is current, for spans
   * that keep them (the operations dashboard's do); most spans leave it out.
   */
  log?(record: SpanLogRecord): void;
}

/** Starts spans. */
export interface Tracer {
  /** False for {@linkcode noopTracer}: callers skip tracing work entirely. */
  readonly enabled: boolean;
  /** Starts a span (not made current: put it in the async context under {@linkcode SPAN_KEY}). */
  startSpan(name: string, options?: StartSpanOptions): Span;
}

/** The async-context key of the current span (a string, so nested contexts copy it). */
export const SPAN_KEY = "fw.span";

const INVALID: SpanContext = Object.freeze({
  traceId: "00000000000000000000000000000000",
  spanId: "0000000000000000",
  traceFlags: 0,
});

/** A span that records nothing. */
export const noopSpan: Span = Object.freeze({
  context: INVALID,
  recording: false,
  setAttribute() {},
  addEvent() {},
  recordException() {},
  setError() {},
  updateName() {},
  end() {},
});

/**
 * A tracer that makes no spans (tracing off).
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { noopTracer } from "@fw/runtime";
 * assert.equal(noopTracer.enabled, false);
 * assert.equal(noopTracer.startSpan("x").recording, false);
 * ```
 */
export const noopTracer: Tracer = Object.freeze({
  enabled: false,
  startSpan: () => noopSpan,
});

/**
 * The span of the current async context, if any.
 *
 * @returns The span, or `undefined` outside any traced request or handler.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { currentSpan, noopSpan, runInContext, SPAN_KEY } from "@fw/runtime";
 * assert.equal(currentSpan(), undefined);
 * runInContext({ [SPAN_KEY]: noopSpan }, () => assert.equal(currentSpan(), noopSpan));
 * ```
 */
export function currentSpan(): Span | undefined {
  return tryContext<Record<string, Span | undefined>>()?.[SPAN_KEY];
}

const TRACEPARENT = /^([0-9a-f]{2})-([0-9a-f]{32})-([0-9a-f]{16})-([0-9a-f]{2})(-.*)?$/;

/**
 * Reads a W3C `traceparent` (and `tracestate`) into a remote span context.
 *
 * @param traceparent The header value.
 * @param tracestate The `tracestate` header value, if any.
 * @returns The span context, or `undefined` when the value is not a valid `traceparent` (bad
 *   shape, version `ff`, an all-zero trace or span id).
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { parseTraceparent } from "@fw/runtime";
 * const sc = parseTraceparent("00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01");
 * assert.equal(sc?.spanId, "00f067aa0ba902b7");
 * assert.equal(sc?.traceFlags, 1);
 * assert.equal(parseTraceparent("00-" + "0".repeat(32) + "-00f067aa0ba902b7-01"), undefined);
 * ```
 */
export function parseTraceparent(
  traceparent: string | null | undefined,
  tracestate?: string | null,
): SpanContext | undefined {
  if (!traceparent) return undefined;
  const m = TRACEPARENT.exec(traceparent.trim().toLowerCase());
  if (m === null || m[1] === "ff" || (m[1] === "00" && m[5] !== undefined)) return undefined;
  if (m[2] === INVALID.traceId || m[3] === INVALID.spanId) return undefined;
  const state = tracestate?.trim();
  return {
    traceId: m[2],
    spanId: m[3],
    traceFlags: parseInt(m[4], 16),
    isRemote: true,
    ...(state ? { traceState: state } : {}),
  };
}

/**
 * Writes a span context as a W3C `traceparent` value (version `00`).
 *
 * @param context The span context.
 * @returns `00-<trace id>-<span id>-<flags>`.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { formatTraceparent } from "@fw/runtime";
 * assert.equal(
 *   formatTraceparent({ traceId: "4bf92f3577b34da6a3ce929d0e0e4736", spanId: "00f067aa0ba902b7", traceFlags: 1 }),
 *   "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01",
 * );
 * ```
 */
export function formatTraceparent(context: SpanContext): string {
  const flags = context.traceFlags & 0xff;
  return `00-${context.traceId}-${context.spanId}-${flags < 16 ? "0" : ""}${flags.toString(16)}`;
}

/**
 * True when a span context is a real one (not the all-zero context of {@linkcode noopSpan}).
 *
 * @param context The span context.
 * @returns Whether it can be propagated.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { isValidSpanContext, noopSpan } from "@fw/runtime";
 * assert.equal(isValidSpanContext(noopSpan.context), false);
 * ```
 */
export function isValidSpanContext(context: SpanContext): boolean {
  return context.traceId !== INVALID.traceId && context.spanId !== INVALID.spanId;
}
