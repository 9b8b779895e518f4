/**
 * The Traces view's store: a bounded ring of the last traces of this process, kept by a span
 * processor of the dashboard's own ({@linkcode SpanRing.onEnd} takes each finished span). Log
 * lines written inside a span can be attached to it ({@linkcode SpanRing.log}). Attributes named
 * `auth.*`, authorization or cookie are dropped on the way in.
 *
 * @module
 */

import { redact } from "./_redact.ts";

/** A finished span, as a tracer hands it to a span processor. */
export interface FinishedSpan {
  /** 32 hex digits. */
  readonly traceId: string;
  /** 16 hex digits. */
  readonly spanId: string;
  /** The parent's span id; absent on a trace's root (or a span whose parent is remote). */
  readonly parentSpanId?: string;
  /** Span name (`GET /orders/:id`, `publish shop.orders.placed`...). */
  readonly name: string;
  /** `server`, `producer`, `consumer`, `internal` or `client`. */
  readonly kind: string;
  /** Start, ms since the epoch. */
  readonly startTime: number;
  /** End, ms since the epoch. */
  readonly endTime: number;
  /** The error description when the span failed. */
  readonly error?: string;
  /** Attributes. */
  readonly attributes?: Readonly<Record<string, unknown>>;
  /** Log lines written while the span was current. */
  readonly logs?: readonly SpanLogLine[];
}

/** A log line attached to a span. */
export interface SpanLogLine {
  /** Time, ms since the epoch. */
  readonly time: number;
  /** Level name. */
  readonly level: string;
  /** The message. */
  readonly message: string;
  /** Its fields (credentials and `auth.*` removed). */
  readonly fields?: Readonly<Record<string, unknown>>;
}

/** One trace in the list. */
export interface TraceSummary {
  /** Trace id. */
  readonly traceId: string;
  /** Name of its first span (the root when it was kept). */
  readonly name: string;
  /** Start of its first span (ISO 8601). */
  readonly start: string;
  /** From its first start to its last end, ms. */
  readonly durationMs: number;
  /** Spans kept. */
  readonly spans: number;
  /** Whether a span failed. */
  readonly error: boolean;
}

/** One span of a trace's waterfall. */
export interface WaterfallSpan {
  /** Span id. */
  readonly spanId: string;
  /** Parent span id. */
  readonly parentSpanId?: string;
  /** Nesting depth under the kept spans (0 for a root). */
  readonly depth: number;
  /** Name. */
  readonly name: string;
  /** Kind. */
  readonly kind: string;
  /** Start offset from the trace's start, ms. */
  readonly offsetMs: number;
  /** Duration, ms. */
  readonly durationMs: number;
  /**
   * For a delivery attempt (a consumer span under a kept publish span): how long the message
   * waited between the end of its publish and this attempt's start, ms (retry back-off included).
   */
  readonly waitMs?: number;
  /** Error, when it failed. */
  readonly error?: string;
  /** Attributes (credentials and `auth.*` removed). */
  readonly attributes: Record<string, unknown>;
  /** Log lines written in the span. */
  readonly logs: readonly SpanLogLine[];
}

/** What `dashboard({ traces })` reads. */
export interface TraceSource {
  /** The kept traces, newest first. */
  traces(): TraceSummary[];
  /** One trace's waterfall, or `undefined` when it is not kept. */
  trace(traceId: string): WaterfallSpan[] | undefined;
}

interface Kept {
  readonly spans: FinishedSpan[];
  readonly logs: Map<string, SpanLogLine[]>;
}

/** Options of {@linkcode SpanRing}. */
export interface SpanRingOptions {
  /** Traces kept (default 100); the oldest goes first. */
  readonly traces?: number;
  /** Spans kept per trace (default 500); later ones are dropped. */
  readonly spansPerTrace?: number;
}

function positive(value: number | undefined, name: string, fallback: number): number {
  if (value === undefined) return fallback;
  if (!Number.isInteger(value) || value < 1) {
    throw new RangeError(`Invalid SpanRing option "${name}": expected a positive integer`);
  }
  return value;
}

/**
 * The last traces of this process, bounded.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { SpanRing } from "@fw/dashboard";
 * const ring = new SpanRing({ traces: 10 });
 * const traceId = "4bf92f3577b34da6a3ce929d0e0e4736";
 * ring.onEnd({ traceId, spanId: "00f067aa0ba902b7", name: "GET /x", kind: "server", startTime: 0, endTime: 5 });
 * ring.onEnd({ traceId, spanId: "00f067aa0ba902b8", parentSpanId: "00f067aa0ba902b7", name: "publish a.b", kind: "producer", startTime: 1, endTime: 2 });
 * assert.equal(ring.traces()[0].spans, 2);
 * assert.deepEqual(ring.trace(traceId)?.map((s) => s.depth), [0, 1]);
 * ```
 */
export class SpanRing implements TraceSource {
  readonly #max: number;
  readonly #perTrace: number;
  readonly #kept = new Map<string, Kept>();

  /**
   * Creates an empty ring.
   *
   * @param options Bounds.
   * @throws {RangeError} For a bound that is not a positive integer.
   */
  constructor(options: SpanRingOptions = {}) {
    this.#max = positive(options.traces, "traces", 100);
    this.#perTrace = positive(options.spansPerTrace, "spansPerTrace", 500);
  }

  #entry(traceId: string): Kept {
    let k = this.#kept.get(traceId);
    if (k === undefined) {
      this.#kept.set(traceId, k = { spans: [], logs: new Map() });
      if (this.#kept.size > this.#max) this.#kept.delete(this.#kept.keys().next().value!);
    }
    return k;
  }

  /**
   * Keeps a finished span (the span-processor hook).
   *
   * @param span The span.
   */
  onEnd(span: FinishedSpan): void {
    const k = this.#entry(span.traceId);
    if (k.spans.length < this.#perTrace) {
      const { logs, ...rest } = span;
      k.spans.push({ ...rest, attributes: redact(span.attributes ?? {}) });
      if (logs !== undefined && logs.length > 0) {
        const shown = logs.map((l) => l.fields ? { ...l, fields: redact(l.fields) } : l);
        const list = k.logs.get(span.spanId);
        if (list) list.unshift(...shown);
        else k.logs.set(span.spanId, shown);
      }
    }
  }

  /**
   * Attaches a log line to a span.
   *
   * @param traceId The trace.
   * @param spanId The span the line was written in.
   * @param line The line.
   */
  log(traceId: string, spanId: string, line: SpanLogLine): void {
    const logs = this.#entry(traceId).logs;
    const kept = line.fields ? { ...line, fields: redact(line.fields) } : line;
    const list = logs.get(spanId);
    if (list) list.push(kept);
    else logs.set(spanId, [kept]);
  }

  /** The kept traces, newest first. */
  traces(): TraceSummary[] {
    const out: TraceSummary[] = [];
    for (const [traceId, k] of this.#kept) {
      if (k.spans.length === 0) continue;
      const start = Math.min(...k.spans.map((s) => s.startTime));
      const end = Math.max(...k.spans.map((s) => s.endTime));
      const first = k.spans.find((s) => s.parentSpanId === undefined) ??
        k.spans.reduce((a, b) => a.startTime <= b.startTime ? a : b);
      out.push({
        traceId,
        name: first.name,
        start: new Date(start).toISOString(),
        durationMs: end - start,
        spans: k.spans.length,
        error: k.spans.some((s) => s.error !== undefined),
      });
    }
    return out.reverse();
  }

  /** One trace as a waterfall: spans depth-first under their parents, siblings by start. */
  trace(traceId: string): WaterfallSpan[] | undefined {
    const k = this.#kept.get(traceId);
    if (k === undefined || k.spans.length === 0) return undefined;
    const byId = new Map(k.spans.map((s) => [s.spanId, s]));
    const ids = new Set(byId.keys());
    const children = new Map<string | undefined, FinishedSpan[]>();
    for (const s of k.spans) {
      const parent = s.parentSpanId !== undefined && ids.has(s.parentSpanId)
        ? s.parentSpanId
        : undefined;
      const list = children.get(parent);
      if (list) list.push(s);
      else children.set(parent, [s]);
    }
    const start = Math.min(...k.spans.map((s) => s.startTime));
    const out: WaterfallSpan[] = [];
    const walk = (parent: string | undefined, depth: number) => {
      const list = (children.get(parent) ?? []).sort((a, b) => a.startTime - b.startTime);
      for (const s of list) {
        const from = s.parentSpanId === undefined ? undefined : byId.get(s.parentSpanId);
        const waitMs = s.kind === "consumer" && from?.kind === "producer"
          ? Math.max(0, s.startTime - from.endTime)
          : undefined;
        out.push({
          spanId: s.spanId,
          ...(s.parentSpanId !== undefined ? { parentSpanId: s.parentSpanId } : {}),
          depth,
          name: s.name,
          kind: s.kind,
          offsetMs: s.startTime - start,
          durationMs: s.endTime - s.startTime,
          ...(waitMs !== undefined ? { waitMs } : {}),
          ...(s.error !== undefined ? { error: s.error } : {}),
          attributes: { ...s.attributes },
          logs: k.logs.get(s.spanId) ?? [],
        });
        walk(s.spanId, depth + 1);
      }
    };
    walk(undefined, 0);
    return out;
  }
}
