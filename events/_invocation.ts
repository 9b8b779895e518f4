/**
 * One running handler invocation: it is the `msg` the handler receives and carries
 * the consumer's bookkeeping (start time, DI scope, its place in the time-out list). The abort
 * controller behind `msg.signal` is only made when a handler reads `signal`.
 *
 * @module
 */

import type { Scope, Span } from "@fw/runtime";
import type { Message } from "./handler_types.ts";
import type { Delivery } from "./transport.ts";

/** Receives an invocation's single outcome. */
export interface InvocationHost {
  /** Called once: `undefined` for success, else the failure. */
  settle(inv: Invocation, error: Error | undefined): void;
}

function noop(): void {}

/**
 * The `ack` of a manual-ack invocation. Made here, not in the constructor: an arrow function in
 * the constructor would keep `this` in a context object allocated by every construction, manual
 * or not.
 */
function manualAck(inv: Invocation): () => void {
  return () => inv._finish(undefined);
}

/** The message object handed to a handler, plus the consumer's bookkeeping. */
export class Invocation implements Message {
  readonly payload: unknown;
  readonly attributes: Readonly<Record<string, string>>;
  readonly traceId: string;
  readonly id: string;
  readonly topic: string;
  readonly attempt: number;
  readonly key?: string;
  /** Acknowledges (manual mode); a no-op in auto mode. */
  readonly ack: () => void;
  /** Internal: the delivery. */
  readonly _delivery: Delivery;
  /**
   * Internal: clock time when the handler started; `NaN` until a consumer that stamps starts per
   * tick stamps it (then a time no earlier than the real start, see `_start_stamps.ts`).
   */
  _start: number;
  /** Internal: its DI scope, when it injects providers. */
  _scope: Scope | undefined;
  /** Internal: the attempt's span, when tracing is on. */
  _span: Span | undefined = undefined;
  /** Internal: settled already. */
  _settled = false;
  /** Internal: the invocation started after this one (the consumer's time-out list). */
  _next: Invocation | undefined = undefined;
  #host: InvocationHost;
  #controller: AbortController | undefined;

  constructor(
    host: InvocationHost,
    delivery: Delivery,
    payload: unknown,
    start: number,
    manual: boolean,
  ) {
    const env = delivery.envelope;
    this.payload = payload;
    this.attributes = env.attributes;
    this.traceId = env.traceId;
    this.id = env.id;
    this.topic = env.topic;
    this.attempt = delivery.attempt;
    if (env.key !== undefined) this.key = env.key;
    this._delivery = delivery;
    this._start = start;
    this.#host = host;
    this.ack = manual ? manualAck(this) : noop;
  }

  /** Aborts when the handler times out. */
  get signal(): AbortSignal {
    return (this.#controller ??= new AbortController()).signal;
  }

  /** Settles once. */
  _finish(error: Error | undefined): void {
    if (this._settled) return;
    this._settled = true;
    this.#host.settle(this, error);
  }

  /** Times the invocation out: aborts `signal` and settles as failed. */
  _timeOut(timeout: number): void {
    if (this._settled) return;
    const err = new Error(`Handler timed out after ${timeout} ms`);
    err.name = "TimeoutError";
    (this.#controller ??= new AbortController()).abort(err);
    this._finish(err);
  }
}
