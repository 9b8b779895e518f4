/**
 * The consumer: one handler instance on one transport. It implements the delivery state machine
 * the same way on every transport: attribute filters, the concurrency gate with its
 * queue and overflow, the per-invocation async context and DI scope, time-outs with
 * `msg.signal`, manual ack, retries with back-off, dead-lettering or discarding, metrics
 * and one `message handled` log entry per delivery.
 *
 * @module
 */

import {
  type Clock,
  type Container,
  copierOf,
  type Counter,
  type Histogram,
  joinMessages,
  type Logger,
  type Meter,
  noopMeter,
  runInNewContext,
  type Scope,
  type Span,
  SPAN_KEY,
  type TimerHandle,
  type Tracer,
} from "@fw/runtime";
import {
  type ConsumerFacts,
  endProcessSpan,
  endWith,
  envelopeContext,
  startProcessSpan,
  startPublishSpan,
} from "./_tracing.ts";
import { type Envelope, envelopeProblem } from "./envelope.ts";
import type { HandlerDefinition, ResolvedHandlerOptions } from "./handler_types.ts";
import { retryDelay } from "./backoff.ts";
import { Invocation, type InvocationHost } from "./_invocation.ts";
import { STAMPED_TIMEOUT_MIN_MS, type StartStamps, startStampsOf } from "./_start_stamps.ts";
import type { Admission, Delivery, Subscription, Transport } from "./transport.ts";

/** Values of the async context inside a handler. */
export interface EventContext {
  /** Trace id of the message. */
  readonly traceId: string;
  /** Topic name. */
  readonly eventTopic: string;
  /** Message id. */
  readonly eventMessageId: string;
  /** 1-based attempt. */
  readonly eventAttempt: number;
}

/** How one delivery ended (the `outcome` of the log entry). */
export type DeliveryOutcome = "acked" | "retry" | "dead-lettered" | "discarded" | "dropped";

/** Everything a consumer needs. */
export interface ConsumerOptions {
  /** The handler. */
  definition: HandlerDefinition;
  /** Where its messages come from. */
  transport: Transport;
  /** Group name (the handler's `group`, or one derived from its name). */
  group: string;
  /** Unique instance id. */
  instanceId: string;
  /** Name for logs and `dlq.handler`. */
  handlerName: string;
  /** Dead-letters an envelope addressed to `<topic>.dlq` (routed by the bus). */
  deadLetter: (envelope: Envelope) => Promise<void>;
  /** Time and timers. */
  clock: Clock;
  /** Logger for the completion entries. */
  logger: Logger;
  /** Meter for the `events.*` metrics. */
  meter: Meter;
  /** DI container; each invocation gets a scope of it. */
  container: Container;
  /** Randomness for jitter (tests pass a fixed function). */
  random?: () => number;
  /** Tracer for a span per delivery attempt (absent: nothing is traced). */
  tracer?: Tracer;
  /** The transport's `messaging.system` (for spans). */
  system?: string;
  /** The handler's file and export (for spans). */
  source?: string;
}

interface Instruments {
  success: Counter;
  failure: Counter;
  retry: Counter;
  dlq: Counter;
  dropped: Counter;
  duration: Histogram;
}

function toError(value: unknown): Error {
  if (value instanceof Error) return value;
  let text: string;
  try {
    text = typeof value === "string" ? value : JSON.stringify(value) ?? String(value);
  } catch {
    text = String(value);
  }
  return new Error(`Handler threw a non-Error value: ${text}`);
}

function matches(filter: Readonly<Record<string, string>>, attrs: Record<string, string>): boolean {
  for (const k in filter) if (attrs[k] !== filter[k]) return false;
  return true;
}

/**
 * Runs one handler instance against one transport.
 *
 * Per delivery it does only what the options ask for: the definition is frozen, so its topic,
 * validator, function and options are read once here; a DI scope is made only for a handler
 * that injects; a settle reads the clock only when the duration is recorded (a meter), logged
 * (`info`) or a failure is handled, and that time is reused as the start time of the delivery it
 * lets in; time-outs share one timer; the completion entry is built only when its level is on.
 *
 * A consumer that records no durations (no meter, `info` off, when it is made) and whose
 * `timeout` is at least {@linkcode STAMPED_TIMEOUT_MIN_MS} does not read the clock when a handler
 * starts: its invocations are stamped once per tick (`_start_stamps.ts`) with a time no earlier
 * than their start, so a time-out never fires early and fires at most a tick late (plus any stall
 * of the event loop before the tick), and the duration of a failure line is a lower bound, 0 for a
 * failure within the tick it started in.
 */
export class Consumer {
  readonly #o: ConsumerOptions;
  readonly #m: Instruments;
  readonly #random: () => number;
  readonly #clock: Clock;
  readonly #topic: string;
  readonly #validate: HandlerDefinition["topic"]["validate"];
  /** Copies a payload `#validate` produced (see `Delivery.validatedBy`), when it has a copier. */
  readonly #copy: ((value: unknown) => unknown) | undefined;
  readonly #opts: ResolvedHandlerOptions;
  readonly #manual: boolean;
  /** Durations are recorded (a meter other than the no-op one). */
  readonly #metered: boolean;
  /** Starts are stamped per tick (these stamps), not read per start; else `undefined`. */
  readonly #stamps: StartStamps | undefined;
  /** The first invocation of the time-out list still waiting for its stamp (the rest follow). */
  #unstamped: Invocation | undefined;
  /** A stamp is requested and not yet taken. */
  #stampAsked = false;
  readonly #queue: Delivery[] = [];
  #head = 0;
  #running = 0;
  #subscription: Subscription | undefined;
  #stopping = false;
  #idle: (() => void) | undefined;
  #settling = 0;
  /** Unsettled invocations in start order (settled ones leave as they reach the front). */
  #tFirst: Invocation | undefined;
  #tLast: Invocation | undefined;
  #timer: TimerHandle | undefined;
  /** Span facts, when tracing is on. */
  readonly #trace: ConsumerFacts | undefined;

  /**
   * Creates a consumer; call {@linkcode Consumer.start} to subscribe.
   *
   * @param options Handler, transport, group and services.
   */
  constructor(options: ConsumerOptions) {
    this.#o = options;
    this.#random = options.random ?? Math.random;
    this.#clock = options.clock;
    this.#topic = options.definition.topic.name;
    this.#validate = options.definition.topic.validate;
    this.#copy = copierOf(this.#validate);
    this.#opts = options.definition.options;
    this.#manual = options.definition.options.ack === "manual";
    this.#metered = options.meter !== noopMeter;
    this.#stamps = this.#metered || options.logger.enabled("info") ||
        this.#opts.timeout < STAMPED_TIMEOUT_MIN_MS
      ? undefined
      : startStampsOf(options.clock);
    const t = this.#topic;
    this.#trace = options.tracer === undefined ? undefined : {
      tracer: options.tracer,
      system: options.system ?? options.transport.name,
      topic: t,
      group: options.group,
      handler: options.handlerName,
      source: options.source,
    };
    const meter = options.meter;
    this.#m = {
      success: meter.counter(`events.handle.${t}.success`, {
        description: "Successful invocations",
      }),
      failure: meter.counter(`events.handle.${t}.failure`, { description: "Failed invocations" }),
      retry: meter.counter(`events.handle.${t}.retry`, { description: "Retry attempts" }),
      dlq: meter.counter(`events.handle.${t}.dlq`, { description: "Messages dead-lettered" }),
      dropped: meter.counter(`events.handle.${t}.dropped`, {
        description: "Deliveries dropped by a full queue",
      }),
      duration: meter.histogram(`events.handle.${t}.duration`, {
        description: "Handler execution time",
        unit: "ms",
      }),
    };
  }

  /** Invocations running now. */
  get running(): number {
    return this.#running;
  }

  /** Deliveries waiting for a concurrency slot. */
  get queued(): number {
    return this.#queue.length - this.#head;
  }

  /** Subscribes to the transport. */
  async start(): Promise<void> {
    const d = this.#o.definition;
    this.#subscription = await this.#o.transport.subscribe({
      topic: d.topic.name,
      group: this.#o.group,
      distribution: d.options.distribution,
      instanceId: this.#o.instanceId,
      timeout: d.options.timeout,
    }, this.#offer);
  }

  /** Leaves the subscription, then waits for every admitted delivery (running and queued). */
  async stop(): Promise<void> {
    this.#stopping = true;
    await this.#subscription?.close();
    this.#subscription = undefined;
    if (this.#running > 0 || this.queued > 0 || this.#settling > 0) {
      await new Promise<void>((resolve) => this.#idle = resolve);
    }
    this.#cancelTimer();
  }

  #offer = (d: Delivery): Admission => {
    const def = this.#o.definition;
    // An envelope the bus's publisher built (`validatedBy`) is well formed; only its topic is
    // checked.
    const problem =
      (d.validatedBy === undefined ? d.problem ?? envelopeProblem(d.envelope) : undefined) ??
        (d.envelope.topic !== this.#topic
          ? `envelope topic "${d.envelope.topic}" does not match "${this.#topic}"`
          : undefined);
    if (problem) {
      this.#deadLetterMalformed(d, problem);
      return "accepted";
    }
    if (def.filter && !matches(def.filter.attributes, d.envelope.attributes)) {
      this.#afterMaybe(d.ack());
      return "accepted";
    }
    const { concurrency, queueLimit } = this.#opts;
    if (concurrency === 0 || this.#running < concurrency) {
      this.#run(d, this.#startTime());
      return "accepted";
    }
    if (queueLimit === 0 || this.queued < queueLimit || d.attempt > 1) {
      // Retries were admitted once already: they always queue.
      this.#queue.push(d);
      return "accepted";
    }
    if (this.#opts.overflow === "drop") {
      this.#m.dropped.add(1);
      const span = this.#trace && startProcessSpan(this.#trace, d.envelope, d.attempt);
      this.#log(d, "dropped", 0, { reason: "queue full" }, span);
      if (span) endProcessSpan(span, "dropped");
      this.#afterMaybe(d.ack());
      return "dropped";
    }
    return "rejected";
  };

  /**
   * Starts queued deliveries while slots are free; `now` is the clock time of the caller, when it
   * read the clock (else it is read for the first delivery started, or left `NaN` for the stamp).
   */
  #pump(now: number | undefined): void {
    const limit = this.#opts.concurrency;
    const queue = this.#queue;
    while (this.#head < queue.length && (limit === 0 || this.#running < limit)) {
      // A taken delivery is released at once (its envelope and payload are garbage as soon as
      // it settles), and an emptied queue starts over, so no shifting or splicing is needed
      // while the consumer keeps up.
      const next = queue[this.#head];
      queue[this.#head++] = undefined!;
      if (this.#head === queue.length) queue.length = this.#head = 0;
      else if (this.#head > 1024 && this.#head * 2 > queue.length) {
        queue.splice(0, this.#head);
        this.#head = 0;
      }
      this.#run(next, now ??= this.#startTime());
    }
    this.#checkIdle();
  }

  #checkIdle(): void {
    if (this.#running === 0 && this.queued === 0 && this.#settling === 0 && this.#idle) {
      this.#cancelTimer();
      const idle = this.#idle;
      this.#idle = undefined;
      idle();
    }
  }

  /** The start time of a delivery started now: the clock's, or `NaN` when starts are stamped. */
  #startTime(): number {
    return this.#stamps === undefined ? this.#clock.now() : NaN;
  }

  /** Runs one delivery; `now` is the clock time it starts at (`NaN`: stamped at the next tick). */
  #run(d: Delivery, now: number): void {
    this.#running++;
    const env = d.envelope;
    const span = this.#trace === undefined
      ? undefined
      : startProcessSpan(this.#trace, env, d.attempt);
    let payload: unknown;
    if (this.#copy !== undefined && d.validatedBy === this.#validate) {
      // produced by this validator in this process: a copy is what validating it again would give
      payload = this.#copy(env.payload);
    } else {
      const checked = this.#validate(env.payload);
      if (!checked.ok) {
        this.#fail(d, new Error(`invalid payload: ${joinMessages(checked.errors)}`), 0, true, span);
        this.#release(now);
        return;
      }
      payload = checked.value;
    }
    const manual = this.#manual;
    const inv = new Invocation(this.#host, d, payload, now, manual);
    this.#track(inv);
    const values: EventContext = {
      traceId: env.traceId,
      eventTopic: env.topic,
      eventMessageId: env.id,
      eventAttempt: d.attempt,
    };
    if (span !== undefined) {
      inv._span = span;
      (values as unknown as Record<string, unknown>)[SPAN_KEY] = span;
    }
    let result: unknown;
    try {
      // two arguments: the runtime hands them to the handler's frame with no array or adapter
      result = runInNewContext(
        values as unknown as Record<string, unknown>,
        this.#call,
        inv,
        this.#o.definition,
      );
    } catch (err) {
      inv._finish(toError(err));
      return;
    }
    if (result !== null && typeof (result as Promise<unknown>)?.then === "function") {
      (result as Promise<unknown>).then(
        manual ? undefined : () => inv._finish(undefined),
        (err) => inv._finish(toError(err)),
      );
    } else if (!manual) inv._finish(undefined);
  }

  /** Calls the handler (inside the invocation's context). */
  #call = (inv: Invocation, def: HandlerDefinition): unknown => {
    if (!def.inject) return (def.fn as (msg: Invocation) => unknown)(inv);
    return this.#callInjecting(
      inv,
      def.inject,
      def.fn as (deps: unknown, msg: Invocation) => unknown,
    );
  };

  /**
   * Calls a handler that injects, in a DI scope of its own. Apart from `#call`, whose every call
   * would otherwise allocate a context object for the variables this callback reads.
   */
  #callInjecting(
    inv: Invocation,
    inject: NonNullable<HandlerDefinition["inject"]>,
    fn: (deps: unknown, msg: Invocation) => unknown,
  ): unknown {
    const scope = inv._scope = this.#o.container.createScope();
    return scope.resolveAll(inject).then((deps) => fn(deps, inv));
  }

  /** Receives each invocation's outcome (from `Invocation._finish`). */
  readonly #host: InvocationHost = { settle: (inv, error) => this.#settle(inv, error) };

  #settle(inv: Invocation, error: Error | undefined): void {
    const o = this.#o;
    if (inv === this.#tFirst) this.#dropSettled();
    // The clock is read only when the duration is recorded or logged (or a failure is handled);
    // otherwise the next queued delivery, if any, reads it when it starts.
    let now: number | undefined;
    let duration = 0;
    if (error !== undefined || this.#metered || o.logger.enabled("info")) {
      now = this.#clock.now();
      // unstamped: it started within the current tick
      const start = inv._start;
      if (start === start) duration = now - start;
      this.#m.duration.record(duration);
    }
    if (inv._scope) this.#dispose(inv._scope);
    const d = inv._delivery;
    if (!error) {
      this.#m.success.add(1);
      this.#log(d, "acked", duration, undefined, inv._span);
      if (inv._span !== undefined) endProcessSpan(inv._span, "acked");
      const acked = d.ack();
      if (acked) this.#after(acked);
    } else {
      this.#m.failure.add(1);
      this.#fail(d, error, duration, false, inv._span);
    }
    this.#release(now);
  }

  /**
   * Disposes an invocation's DI scope. Apart from `#settle`, whose every call would otherwise
   * allocate a context object for the variables this callback reads.
   */
  #dispose(scope: Scope): void {
    scope.dispose().catch((err) =>
      this.#o.logger.error("event handler scope disposal failed", { error: err })
    );
  }

  /** Frees a slot; `now` is the clock time of the caller, when it read the clock. */
  #release(now: number | undefined): void {
    this.#running--;
    this.#pump(now);
  }

  #afterMaybe(p: void | Promise<void>): void {
    if (p) this.#after(p);
  }

  /**
   * Tracks a transport call (ack, retry, dead-letter) so stop() waits for it. A transport that
   * batches its writes (Redis: one `XACK` per turn of the event loop) hands every call of a batch
   * the same promise: those calls share one watcher (one failure log per write), instead of two
   * promises and two reactions per message.
   */
  #after(p: Promise<void>): void {
    this.#settling++;
    const last = this.#watched;
    if (last !== undefined && last.p === p) {
      last.n++;
      return;
    }
    const watch = { p, n: 1 };
    this.#watched = watch;
    p.catch((err) => {
      this.#o.logger.error("event transport call failed", { error: err });
    }).finally(() => {
      if (this.#watched === watch) this.#watched = undefined;
      this.#settling -= watch.n;
      this.#checkIdle();
    });
  }
  /** The transport call last watched, with how many calls share it. */
  #watched: { readonly p: Promise<void>; n: number } | undefined;

  // Time-outs: the timeout is the same for every invocation of this consumer, so deadlines grow
  // in start order. Invocations form a list in start order (linked through `_next`, no array to
  // grow and shrink per message); one timer, armed for the oldest unsettled one, serves them all.
  // Unstamped invocations (start `NaN`) are the tail of the list from `#unstamped` on: the stamp
  // sets them all and arms the timer, which is not armed for an unstamped one.
  #track(inv: Invocation): void {
    if (this.#tLast === undefined) this.#tFirst = inv;
    else this.#tLast._next = inv;
    this.#tLast = inv;
    if (inv._start !== inv._start && this.#unstamped === undefined) {
      this.#unstamped = inv;
      if (!this.#stampAsked) {
        this.#stampAsked = true;
        this.#stamps!.request(this.#stamp);
      }
    }
    if (this.#timer === undefined) this.#arm();
  }

  /** Takes the time read after its unstamped invocations started (from `StartStamps`). */
  #stamp = (now: number): void => {
    this.#stampAsked = false;
    for (let inv = this.#unstamped; inv !== undefined; inv = inv._next) inv._start = now;
    this.#unstamped = undefined;
    if (this.#timer === undefined) this.#arm();
  };

  /** Unlinks the first invocation of the list (the caller checked there is one). */
  #unlinkFirst(): Invocation {
    const first = this.#tFirst!;
    const next = first._next;
    if (first === this.#unstamped) this.#unstamped = next;
    first._next = undefined;
    this.#tFirst = next;
    if (next === undefined) this.#tLast = undefined;
    return first;
  }

  /** Unlinks the settled invocations at the front of the list (they finish mostly in order). */
  #dropSettled(): void {
    while (this.#tFirst !== undefined && this.#tFirst._settled) this.#unlinkFirst();
  }

  /** Arms the timer for the oldest unsettled invocation, unless it is armed already or unstamped. */
  #arm(): void {
    if (this.#timer !== undefined) return;
    this.#dropSettled();
    const first = this.#tFirst;
    if (first === undefined || first._start !== first._start) return;
    const clock = this.#clock;
    this.#timer = clock.setTimeout(
      this.#onTimer,
      first._start + this.#opts.timeout - clock.now(),
    );
  }

  #onTimer = (): void => {
    this.#timer = undefined;
    const now = this.#clock.now();
    const timeout = this.#opts.timeout;
    for (;;) {
      const first = this.#tFirst;
      // (an unstamped start is NaN: never due)
      if (first === undefined || !(first._settled || first._start + timeout <= now)) break;
      // Unlink before timing out: settling it runs code that may look at the list.
      this.#unlinkFirst()._timeOut(timeout);
    }
    this.#arm();
  };

  #cancelTimer(): void {
    if (this.#timer !== undefined) {
      this.#clock.clearTimeout(this.#timer);
      this.#timer = undefined;
    }
    if (this.#stampAsked) {
      this.#stampAsked = false;
      this.#stamps!.withdraw(this.#stamp);
    }
  }

  #fail(
    d: Delivery,
    error: Error,
    duration: number,
    permanent: boolean,
    span: Span | undefined,
  ): void {
    this.#after(this.#terminal(d, error, duration, permanent, span));
  }

  async #terminal(
    d: Delivery,
    error: Error,
    duration: number,
    permanent: boolean,
    span: Span | undefined,
  ): Promise<void> {
    const opts = this.#o.definition.options;
    if (!permanent && d.attempt <= opts.maxRetries) {
      const delay = retryDelay(d.attempt, opts.maxBackoff, opts.jitter, this.#random);
      this.#m.retry.add(1);
      this.#log(d, "retry", duration, { error: error.message, delay }, span);
      if (span !== undefined) endProcessSpan(span, "retry", error);
      await d.retry(delay);
      return;
    }
    if (!opts.dlq) {
      this.#log(d, "discarded", duration, { error: error.message }, span);
      if (span !== undefined) endProcessSpan(span, "discarded", error);
      await d.ack();
      return;
    }
    const env = d.envelope;
    const dead: Envelope = {
      ...env,
      topic: `${env.topic}.dlq`,
      attributes: {
        ...env.attributes,
        "dlq.original_topic": env.topic,
        "dlq.attempts": String(d.attempt),
        "dlq.error": error.message,
        "dlq.handler": this.#o.handlerName,
      },
      publishedAt: this.#o.clock.now(),
    };
    try {
      await this.#deadLetter(dead, env, span);
    } catch (err) {
      // Never lose the message: keep it on the transport and try again later.
      this.#o.logger.error("dead-lettering failed; the message will be redelivered", {
        error: err,
        topic: env.topic,
        messageId: env.id,
      });
      if (span !== undefined) endProcessSpan(span, "retry", error);
      await d.retry(opts.maxBackoff);
      return;
    }
    this.#m.dlq.add(1);
    this.#log(d, "dead-lettered", duration, { error: error.message }, span);
    if (span !== undefined) endProcessSpan(span, "dead-lettered", error);
    await d.ack();
  }

  /**
   * Dead-letters an envelope; traced, its publish span is a child of the failed attempt's span
   * and links to the original message's publish.
   */
  #deadLetter(dead: Envelope, original: Envelope, span: Span | undefined): Promise<void> {
    const t = this.#trace;
    if (t === undefined || span === undefined) return this.#o.deadLetter(dead);
    const from = envelopeContext(original);
    const dlq = startPublishSpan(t.tracer, t.system, dead, from ? [from] : [], span);
    return endWith(dlq, this.#o.deadLetter(dead));
  }

  #deadLetterMalformed(d: Delivery, problem: string): void {
    const raw = d.envelope as unknown as Record<string, unknown> | null;
    const topicName = this.#o.definition.topic.name;
    const id = typeof raw?.id === "string" && raw.id ? raw.id : crypto.randomUUID();
    const traceId = typeof raw?.traceId === "string" && raw.traceId
      ? raw.traceId
      : crypto.randomUUID().replaceAll("-", "");
    const reason = `malformed envelope: ${problem}`;
    const dead: Envelope = {
      id,
      topic: `${topicName}.dlq`,
      payload: raw && typeof raw === "object" && "payload" in raw ? raw.payload : raw,
      attributes: {
        "dlq.original_topic": topicName,
        "dlq.attempts": String(d.attempt),
        "dlq.error": reason,
        "dlq.handler": this.#o.handlerName,
      },
      traceId,
      publishedAt: this.#o.clock.now(),
    };
    this.#after(
      this.#o.deadLetter(dead).then(
        () => {
          this.#m.dlq.add(1);
          this.#o.logger.error("message handled", {
            traceId,
            event: {
              topic: topicName,
              messageId: id,
              attempt: d.attempt,
              outcome: "dead-lettered",
              duration: 0,
              handler: this.#o.handlerName,
              error: reason,
            },
          });
          return d.ack();
        },
        (err) => {
          this.#o.logger.error("dead-lettering a malformed envelope failed", { error: err });
          return d.retry(this.#o.definition.options.maxBackoff);
        },
      ),
    );
  }

  #log(
    d: Delivery,
    outcome: DeliveryOutcome,
    duration: number,
    extra?: Record<string, unknown>,
    span?: Span,
  ): void {
    const logger = this.#o.logger;
    const level = outcome === "acked" ? "info" : outcome === "dead-lettered" ? "error" : "warn";
    if (!logger.enabled(level)) return;
    const fields = {
      traceId: d.envelope.traceId,
      // The attempt's span (the line is written after the handler's context ended).
      ...(span !== undefined && span.recording
        ? { trace_id: span.context.traceId, span_id: span.context.spanId }
        : {}),
      event: {
        topic: d.envelope.topic,
        messageId: d.envelope.id,
        attempt: d.attempt,
        outcome,
        duration,
        handler: this.#o.handlerName,
        ...extra,
      },
    };
    logger[level]("message handled", fields);
    // a span that keeps log lines (the dashboard's) gets this one too, written after its context
    span?.log?.({ level, message: "message handled", fields, time: this.#clock.now() });
  }
}
