/**
 * The structural client interface of the cloud pub/sub transport. fw depends on no vendor SDK:
 * the application hands {@linkcode cloudPubSubTransport} an object with these four methods, built
 * by a small adapter over its engine's client (`natsJetStreamClient()` from
 * `@fw/events/cloud-nats`, `googlePubSubClient()` for a `@google-cloud/pubsub` `PubSub`, or one of
 * its own).
 *
 * @module
 */

import type { ScheduleStore } from "../../schedule/store.ts";

/** Options of one publish. */
export interface CloudPublishOptions {
  /** Message attributes (headers): string keys and values, filterable by the engine. */
  readonly attributes: Readonly<Record<string, string>>;
  /** Ordering key: engines that order by key deliver equal keys in publish order. */
  readonly orderingKey?: string;
  /**
   * Idempotency key: engines that de-duplicate publishes (NATS JetStream's `Nats-Msg-Id`) drop a
   * second publish with the same key within their window, so a retried publish is stored once.
   */
  readonly deduplicationId?: string;
  /**
   * Deliver no earlier than this time (ms since the epoch). Only given to clients that declare
   * a {@linkcode CloudPubSubClient.maxDelay}, and at most that far ahead.
   */
  readonly deliverAt?: number;
}

/** One message handed to a subscription callback. */
export interface CloudMessage {
  /** The engine's message id. */
  readonly id: string;
  /** The body. */
  readonly data: Uint8Array;
  /** The attributes it was published with. */
  readonly attributes: Readonly<Record<string, string>>;
  /**
   * Optional: one attribute, read without building {@linkcode CloudMessage.attributes} (the
   * transport reads fw's mark this way on every message when the client offers it).
   */
  attribute?(name: string): string | undefined;
  /** 1-based delivery attempt on this subscription (`0` where the engine does not count). */
  readonly deliveryAttempt: number;
  /** Done: the engine forgets the message for this subscription. */
  ack(): void | Promise<void>;
  /**
   * Not done: the engine delivers it again, after `delayMs` where it supports a per-message
   * delay, else after the subscription's own retry policy.
   */
  nack(delayMs?: number): void | Promise<void>;
}

/** What a subscription is (the transport derives it from a handler's group). */
export interface CloudSubscribeOptions {
  /** Topic name (an fw topic such as `orders.created`). */
  readonly topic: string;
  /**
   * Subscription name: one per handler group, shared by all its instances (they compete for
   * messages), or one per instance of a broadcast group.
   */
  readonly subscription: string;
  /**
   * `true` for a broadcast instance's own subscription: the client removes it on close, and the
   * engine should expire it when the instance vanishes without closing.
   */
  readonly ephemeral: boolean;
  /**
   * The most deliveries of one message (the engine's delivery limit, such as JetStream's
   * `max_deliver`); the transport dead-letters a message whose last allowed delivery fails.
   */
  readonly maxDeliveries: number;
}

/** A subscription's handle. */
export interface CloudSubscription {
  /** Stops receiving (and removes an ephemeral subscription). Unsettled messages return. */
  close(): Promise<void>;
}

/** What a client can tell about one subscription ({@linkcode CloudPubSubClient.inspect}). */
export interface CloudSubscriptionStats {
  /** The subscription name fw gave (`<topic>~<group>`), or the engine's name for it. */
  readonly subscription: string;
  /** The topic. */
  readonly topic: string;
  /** Messages not yet delivered. */
  readonly waiting?: number;
  /** Delivered and not acknowledged. */
  readonly inFlight?: number;
  /** Age of the oldest unacknowledged message, ms. */
  readonly oldestAgeMs?: number;
  /** Engine figures by name. */
  readonly details?: Readonly<Record<string, number | string>>;
  /** What the engine cannot tell. */
  readonly note?: string;
}

/**
 * What fw needs from a managed pub/sub client. Publish with attributes and an ordering key;
 * subscribe with a message callback whose messages expose data, attributes, id, delivery attempt,
 * `ack()` and `nack()`; tell whether a topic has subscriptions (dead letters with none are kept by
 * the transport); close.
 *
 * A successful handler acks, a failed one nacks; subscriptions are created on first use and
 * survive their subscribers (a competing group receives what was published while it was away).
 */
export interface CloudPubSubClient {
  /** The engine's `messaging.system` name for spans (`nats`, `gcp_pubsub`); default `cloud`. */
  readonly system?: string;
  /** Publishes one message; resolves once the engine stored it, to the engine's message id. */
  publish(topic: string, data: Uint8Array, options: CloudPublishOptions): Promise<string>;
  /** Creates the subscription when missing and receives its messages. */
  subscribe(
    options: CloudSubscribeOptions,
    onMessage: (message: CloudMessage) => void,
  ): Promise<CloudSubscription>;
  /** Whether any subscription receives this topic's messages. */
  hasSubscriptions(topic: string): Promise<boolean>;
  /** Releases the client's connections (those it owns). */
  close(): Promise<void>;
  /**
   * Where schedules on this transport keep their shared state (optional: without it, the
   * transport runs no schedules). `natsJetStreamClient()` keeps it in a key-value bucket.
   */
  scheduleStore?(): ScheduleStore;
  /**
   * How far ahead, in ms, the client can hold a delayed publish (`deliverAt`). Absent: the engine
   * cannot delay messages, and a delayed publish on the transport throws a `TypeError`.
   */
  readonly maxDelay?: number;
  /** Optional: each subscription's backlog, for `inspect()` of the transport (dashboards). */
  inspect?(): Promise<CloudSubscriptionStats[]>;
}

const METHODS = ["publish", "subscribe", "hasSubscriptions", "close"] as const;

/**
 * Checks that a value has every method of {@linkcode CloudPubSubClient}.
 *
 * @param client The value given as the `client` option.
 * @returns The same value, typed.
 * @throws {TypeError} Naming the first missing method.
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { assertCloudPubSubClient } from "@fw/events/cloud";
 * assert.throws(
 *   () => assertCloudPubSubClient({ publish() {} }),
 *   /missing method "subscribe"/,
 * );
 * ```
 */
export function assertCloudPubSubClient(client: unknown): CloudPubSubClient {
  if (typeof client !== "object" || client === null) {
    throw new TypeError(
      'Invalid cloudPubSubTransport() option "client": expected an object with methods ' +
        METHODS.map((m) => `"${m}"`).join(", "),
    );
  }
  for (const m of METHODS) {
    if (typeof (client as Record<string, unknown>)[m] !== "function") {
      throw new TypeError(
        `Invalid cloudPubSubTransport() option "client": missing method "${m}"`,
      );
    }
  }
  return client as CloudPubSubClient;
}
