/**
 * The spans of the events member, with the OpenTelemetry messaging conventions: a PRODUCER span
 * per publish (`<topic> publish`), whose W3C trace context goes into the envelope so that it
 * travels on every transport, and a CONSUMER span per delivery attempt (`<topic> process`),
 * child of that context, with the attempt, the handler's group and file and the outcome. A dead
 * letter's publish span links to the original message. The tracer is the application's
 * (`AppContext.tracer`, set by `telemetry()`); without one nothing here runs. Internal.
 *
 * @module
 */

import {
  currentSpan,
  formatTraceparent,
  isValidSpanContext,
  parseTraceparent,
  type Span,
  type SpanContext,
  type Tracer,
} from "@fw/runtime";
import type { Envelope } from "./envelope.ts";
import type { Transport } from "./transport.ts";

/** `messaging.system` by transport name, where it differs from the name. */
const SYSTEMS: Readonly<Record<string, string>> = { sql: "postgresql" };

/**
 * The `messaging.system` span attribute of a transport: its own `messagingSystem` when it has
 * one (the cloud transport names its client's system), else from its name.
 *
 * @param transport The transport.
 * @returns The system name.
 */
export function messagingSystem(transport: Transport): string {
  const own = (transport as { messagingSystem?: unknown }).messagingSystem;
  return typeof own === "string" ? own : SYSTEMS[transport.name] ?? transport.name;
}

/**
 * The publish span on the envelope it stamped, under a symbol: an in-process transport (the
 * memory broker) hands the same object to its consumers, whose spans then start from the span
 * itself rather than from its parsed `traceparent`. A symbol key is invisible to
 * `JSON.stringify` and structured clone, so no transport stores it; it replaces a `WeakMap`,
 * whose entries cost the garbage collector far more per message (ephemerons).
 */
const PUBLISH_SPAN: unique symbol = Symbol("fw.publishSpan");

type Stamped = Envelope & { [PUBLISH_SPAN]?: Span };

/** The trace context an envelope carries, if valid. */
export function envelopeContext(envelope: Envelope): SpanContext | undefined {
  return parseTraceparent(envelope.traceparent, envelope.tracestate);
}

/** The parent of a delivery's span: its publish span in this process, else the envelope's. */
function deliveryParent(envelope: Envelope): Span | SpanContext | undefined {
  return (envelope as Stamped)[PUBLISH_SPAN] ?? envelopeContext(envelope);
}

/** Writes a span's trace context into an envelope (and its trace id). */
function stamp(envelope: Envelope, sc: SpanContext): void {
  if (!isValidSpanContext(sc)) return;
  envelope.traceId = sc.traceId;
  envelope.traceparent = formatTraceparent(sc);
  if (sc.traceState) envelope.tracestate = sc.traceState;
  else delete envelope.tracestate;
}

/**
 * Starts the PRODUCER span of a publish, child of the current span (else of the context the
 * envelope came with, as on the Event Server's publish endpoint), and stamps its trace context
 * into the envelope.
 *
 * @param tracer The tracer.
 * @param system The transport's `messaging.system`.
 * @param envelope The envelope (changed in place).
 * @param links Spans to link (a dead letter links to the original message).
 * @param parent The parent span, when not the current one.
 * @returns The span.
 */
export function startPublishSpan(
  tracer: Tracer,
  system: string,
  envelope: Envelope,
  links?: readonly SpanContext[],
  parent?: Span,
): Span {
  const p = parent ?? currentSpan() ?? envelopeContext(envelope);
  const span = tracer.startSpan(`${envelope.topic} publish`, {
    kind: "producer",
    ...(p !== undefined ? { parent: p } : {}),
    ...(links !== undefined && links.length > 0 ? { links } : {}),
    attributes: {
      "messaging.system": system,
      "messaging.destination.name": envelope.topic,
      "messaging.message.id": envelope.id,
      "messaging.operation.type": "send",
      "messaging.operation.name": "publish",
    },
  });
  stamp(envelope, span.context);
  (envelope as Stamped)[PUBLISH_SPAN] = span;
  return span;
}

/**
 * Ends a span when a promise settles: an error is recorded and marks the span failed.
 *
 * @param span The span.
 * @param promise The traced work.
 * @returns The same outcome.
 */
export function endWith<T>(span: Span, promise: Promise<T>): Promise<T> {
  return promise.then((value) => {
    span.end();
    return value;
  }, (error) => {
    failSpan(span, error);
    span.end();
    throw error;
  });
}

/**
 * Records an error on a span and marks it failed.
 *
 * @param span The span.
 * @param error The error.
 */
export function failSpan(span: Span, error: unknown): void {
  span.recordException(error);
  span.setError((error as Error)?.message ?? String(error));
}

/** Facts of a consumer that its delivery spans carry. */
export interface ConsumerFacts {
  readonly tracer: Tracer;
  readonly system: string;
  readonly topic: string;
  readonly group: string;
  readonly handler: string;
  readonly source: string | undefined;
}

/**
 * Starts the CONSUMER span of one delivery attempt, child of the publish context in the
 * envelope (a new trace when it has none); an unsampled publisher's decision is kept.
 *
 * @param c The consumer's facts.
 * @param envelope The delivered envelope.
 * @param attempt The 1-based attempt.
 * @returns The span.
 */
export function startProcessSpan(c: ConsumerFacts, envelope: Envelope, attempt: number): Span {
  const attributes: Record<string, string | number> = {
    "messaging.system": c.system,
    "messaging.destination.name": c.topic,
    "messaging.message.id": envelope.id,
    "messaging.operation.type": "process",
    "messaging.operation.name": "process",
    "messaging.consumer.group.name": c.group,
    "fw.events.attempt": attempt,
    "fw.events.handler": c.handler,
  };
  if (c.source !== undefined) attributes["code.file.path"] = c.source.replace(/#.*$/, "");
  return c.tracer.startSpan(`${c.topic} process`, {
    kind: "consumer",
    parent: deliveryParent(envelope) ?? null,
    attributes,
  });
}

/**
 * The span of one schedule run: the hook for `events/schedule/` (cron schedules), which starts
 * it with `EventBus.tracer` when that is defined, runs the job with the span in its context under
 * `SPAN_KEY` (so what the job publishes joins its trace), and ends it with
 * {@linkcode endProcessSpan} (`acked` on success, the error otherwise). Each run is a new trace.
 *
 * @param tracer The bus's tracer.
 * @param schedule The schedule's name.
 * @param attributes More attributes (the cron expression, the planned time).
 * @returns The span.
 */
export function startScheduleSpan(
  tracer: Tracer,
  schedule: string,
  attributes: Readonly<Record<string, string | number>> = {},
): Span {
  return tracer.startSpan(`${schedule} run`, {
    kind: "internal",
    parent: null,
    attributes: { "fw.schedule.name": schedule, ...attributes },
  });
}

/**
 * Ends a delivery span with its outcome (`acked`, `retry`, `dead-lettered`, `discarded`,
 * `dropped`) and, on failure, the error.
 *
 * @param span The span.
 * @param outcome The outcome.
 * @param error The handler's error, if it failed.
 */
export function endProcessSpan(span: Span, outcome: string, error?: unknown): void {
  span.setAttribute("fw.events.outcome", outcome);
  if (error !== undefined) failSpan(span, error);
  span.end();
}
