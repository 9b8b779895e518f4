/**
 * Types of handler definitions: options, the message a handler receives, and the
 * builder interfaces returned by `handler()`.
 *
 * @module
 */

import type { InferSchema, ProviderMap, Resolved, SchemaLike } from "@fw/runtime";
import type { Topic } from "./topic.ts";

/** Handler options, including `jitter` (the random part of each retry delay). */
export interface HandlerOptions {
  /** Stable subscription/group name; required by external transports. */
  group?: string;
  /** `competing` (default): one instance of the group gets each message; `broadcast`: every instance. */
  distribution?: "competing" | "broadcast";
  /** Retries after the first attempt before dead-lettering (default 10). */
  maxRetries?: number;
  /** Cap on one retry delay in ms (default 60000). */
  maxBackoff?: number;
  /** Random reduction of each retry delay, as a fraction (default 0.1; 0 gives exact 1 s, 2 s, 4 s). */
  jitter?: number;
  /**
   * Handler time-out in ms (default 30000); `msg.signal` aborts when it passes, never earlier.
   * With no meter and logs at `warn` or above, a time-out of 1000 or more counts from a start
   * noted once per 10 ms tick, and may fire up to 10 ms late, plus however long the event loop
   * was blocked before that tick.
   */
  timeout?: number;
  /** Maximum concurrent invocations per instance; 0 (default) is unlimited. */
  concurrency?: number;
  /** Maximum deliveries waiting for a concurrency slot; 0 (default) is unlimited. */
  queueLimit?: number;
  /** When the queue is full: `throw` (default; publish throws) or `drop` (counted and logged). */
  overflow?: "throw" | "drop";
  /** Dead-letter after the last retry (default true); false logs and discards. */
  dlq?: boolean;
  /** `auto` (default): returning acknowledges; `manual`: the handler calls `msg.ack()`. */
  ack?: "auto" | "manual";
}

/** Options with every default applied. */
export interface ResolvedHandlerOptions {
  /** Group, when set. */
  readonly group?: string;
  /** Distribution. */
  readonly distribution: "competing" | "broadcast";
  /** Retries after the first attempt. */
  readonly maxRetries: number;
  /** Cap on one retry delay (ms). */
  readonly maxBackoff: number;
  /** Jitter fraction. */
  readonly jitter: number;
  /** Time-out (ms). */
  readonly timeout: number;
  /** Concurrency (0 unlimited). */
  readonly concurrency: number;
  /** Queue limit (0 unlimited). */
  readonly queueLimit: number;
  /** Overflow behaviour. */
  readonly overflow: "throw" | "drop";
  /** Dead-letter when retries are exhausted. */
  readonly dlq: boolean;
  /** Acknowledgement mode. */
  readonly ack: "auto" | "manual";
}

/** The message a handler receives. */
export interface Message<P = unknown> {
  /** The validated payload. */
  readonly payload: P;
  /** String attributes (including `auth.*` captured at publish). */
  readonly attributes: Readonly<Record<string, string>>;
  /** Trace id of the publish. */
  readonly traceId: string;
  /** Message id. */
  readonly id: string;
  /** Topic name. */
  readonly topic: string;
  /** 1-based delivery attempt. */
  readonly attempt: number;
  /** Ordering key, when the publisher gave one. */
  readonly key?: string;
  /** Aborts when the handler times out or the consumer stops. */
  readonly signal: AbortSignal;
  /** Acknowledges the message (manual ack); ignored in auto mode, after a time-out, or twice. */
  ack(): void;
}

/** The function given to `.handle()`. */
export type HandleFn<P, D extends ProviderMap | undefined> = D extends ProviderMap
  ? (deps: Resolved<D>, msg: Message<P>) => unknown
  : (msg: Message<P>) => unknown;

/** Attribute filter: every listed attribute must equal the value. */
export interface HandlerFilter {
  /** Required attribute values. */
  attributes: Readonly<Record<string, string>>;
}

/** A finished handler definition, as exported from a `*.on.ts` file. */
export interface HandlerDefinition<S extends SchemaLike = SchemaLike> {
  /** Marker that tells handler definitions apart from other exports. */
  readonly kind: "handler";
  /** The topic. */
  readonly topic: Topic<S>;
  /** Resolved options. */
  readonly options: ResolvedHandlerOptions;
  /** The attribute filter, when set. */
  readonly filter?: HandlerFilter;
  /** Providers to inject, when `.inject()` was used. */
  readonly inject?: ProviderMap;
  /** The handler function: `(msg)`, or `(deps, msg)` with `.inject()`. */
  readonly fn: (...args: never[]) => unknown;
  /** A name for logs and `dlq.handler` (file and export when discovered, else the group or topic). */
  readonly name?: string;
}

/** The builder returned by `handler(Topic)`; `.handle()` comes last. */
export interface HandlerBuilder<S extends SchemaLike, D extends ProviderMap | undefined> {
  /** Sets options (merged with earlier calls). */
  options(options: HandlerOptions): HandlerBuilder<S, D>;
  /** Only messages whose attributes match are handled; the rest are acknowledged unseen. */
  filter(filter: HandlerFilter): HandlerBuilder<S, D>;
  /** Providers resolved per invocation in the invocation's DI scope. */
  inject<N extends ProviderMap>(providers: N): HandlerBuilder<S, N>;
  /** Sets the handler function and finishes the definition. */
  handle(fn: HandleFn<InferSchema<S>, D>): HandlerDefinition<S>;
  /** Names the handler for logs and dead letters. */
  named(name: string): HandlerBuilder<S, D>;
}
