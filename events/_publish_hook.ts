/**
 * The one entry into the bus that the publisher's path calls, with the type of what a publish
 * returns. `event_bus.ts` sets it when it loads, so the publisher (in the graph of
 * `@fw/events/core`) does not import the bus, its consumers and tracing: in production they load
 * with the first publish (see `events_plugin.ts`), and the publisher only reaches this entry with
 * a bus in hand.
 *
 * @module
 */

import type { Validator } from "@fw/runtime";
import type { Envelope } from "./envelope.ts";

/** What a publish returns. */
export interface PublishReceipt {
  /** The message id. */
  readonly messageId: string;
  /** The trace id the message carries. */
  readonly traceId: string;
}

/** Publishes a built envelope on a bus, given the validator that produced its payload. */
export type PublishValidated = (
  bus: object,
  envelope: Envelope,
  validator: Validator<unknown>,
) => Promise<PublishReceipt>;

/**
 * Internal to `@fw/events` (the publisher's path): `EventBus.publishEnvelope` with no options, for
 * an envelope the publisher built around a payload `validator` produced, which no one else holds.
 * An in-process transport tells its consumers, which then copy the payload instead of validating
 * it again. Set by `event_bus.ts` when it loads (before any bus exists).
 */
export let publishValidated: PublishValidated;

/**
 * Sets {@linkcode publishValidated} (called once, by `event_bus.ts`).
 *
 * @param fn The bus's entry.
 */
export function setPublishValidated(fn: PublishValidated): void {
  publishValidated = fn;
}
