/**
 * The one entry into the bus that the publisher calls, with the types of a publish's options and
 * of what it returns. `_publish.ts` (the publish path: attributes, envelope, delays) sets it when
 * it loads, and `event_bus.ts` imports `_publish.ts`; so the publisher (in the graph of
 * `@fw/events/core`) imports neither the bus, its consumers and tracing nor the publish path: in
 * production they load with the first publish (see `events_plugin.ts`), and the publisher only
 * reaches this entry with a bus in hand.
 *
 * @module
 */

import type { Topic } from "./topic.ts";

/** Publish options. */
export interface PublishOptions {
  /** Message id (default a random UUID). */
  messageId?: string;
  /** Ordering/partition key. */
  key?: string;
  /** De-duplication key: repeats within the transport's window are dropped. */
  dedupeKey?: string;
  /** String attributes; keys starting with `auth.` are ignored. */
  attributes?: Record<string, string>;
  /** Explicit trace id; wins over the inherited one. */
  traceId?: string;
  /**
   * An open transaction to publish in (the outbox pattern), for a transport that supports it
   * (`sqlTransport` from `@fw/events/sql`: the `tx` of postgres.js `sql.begin`). The message is
   * stored in that transaction, so it is delivered only if the transaction commits. Other
   * transports reject the option.
   */
  tx?: unknown;
  /**
   * Deliver no earlier than this many ms from now. The message is stored at once, then handed
   * to handlers once it is due (retries, filters and dead letters as usual). At most one of
   * `delay` and `deliverAt`; at most the transport's `capabilities.maxDelay` ahead.
   */
  delay?: number;
  /**
   * Deliver no earlier than this time (a `Date` or ms since the epoch); a time already past means
   * now. At most one of `delay` and `deliverAt`.
   */
  deliverAt?: Date | number;
}

/** What a publish returns. */
export interface PublishReceipt {
  /** The message id. */
  readonly messageId: string;
  /** The trace id the message carries. */
  readonly traceId: string;
}

/** Validates `payload` against `topic` and publishes it on `bus` (an `EventBus`). */
export type PublishOnBus = (
  bus: object,
  topic: Topic,
  payload: unknown,
  options: PublishOptions,
) => Promise<PublishReceipt>;

/**
 * Internal to `@fw/events` (the publisher's path): what a publisher does once it has a bus. Set
 * by `_publish.ts` when it loads (`event_bus.ts` imports it, so before any bus exists).
 */
export let publishOnBus: PublishOnBus;

/**
 * Sets {@linkcode publishOnBus} (called once, by `_publish.ts`).
 *
 * @param fn The publish path.
 */
export function setPublishOnBus(fn: PublishOnBus): void {
  publishOnBus = fn;
}
