/**
 * `googlePubSubClient(pubsub)`: a {@linkcode CloudPubSubClient} over a Google Cloud Pub/Sub
 * `PubSub` instance (npm `@google-cloud/pubsub`) that the application creates and passes in; fw
 * imports nothing from the package. The shapes below are the few members fw calls, and a test
 * checks that the package's `PubSub` satisfies them.
 *
 * - A topic `a.b` is the Pub/Sub topic `<topicPrefix>a.b` (created when missing); a subscription
 *   is created when missing with a retry policy (Pub/Sub has no per-message nack delay) and,
 *   for broadcast instances, an expiration policy; ephemeral ones are deleted on close.
 * - Pub/Sub counts delivery attempts only on subscriptions with a dead-letter policy: give
 *   `deadLetterTopic` so that `eventAttempt` counts and fw's `maxRetries` applies.
 *
 * @module
 */

import type {
  CloudMessage,
  CloudPublishOptions,
  CloudPubSubClient,
  CloudSubscribeOptions,
  CloudSubscription,
} from "./client.ts";

/** The members of a Pub/Sub `Message` fw uses. */
export interface GoogleMessageLike {
  /** Message id. */
  readonly id: string;
  /** Body. */
  readonly data: Uint8Array;
  /** Attributes. */
  readonly attributes: { [key: string]: string };
  /** Delivery attempt (0 without a dead-letter policy). */
  readonly deliveryAttempt: number;
  /** Acknowledges. */
  ack(): void;
  /** Negatively acknowledges (redelivery per the subscription's retry policy). */
  nack(): void;
}

/** The members of a Pub/Sub `Subscription` fw uses. */
export interface GoogleSubscriptionLike {
  /** Resolves to `[exists]`. */
  exists(): Promise<[boolean]>;
  /** Receives messages and errors. */
  on(event: "message", listener: (message: GoogleMessageLike) => void): unknown;
  /** Receives stream errors. */
  on(event: "error", listener: (error: Error) => void): unknown;
  /** Stops receiving. */
  close(): Promise<void>;
  /** Deletes the subscription. */
  delete(): Promise<unknown>;
}

/** The members of a Pub/Sub `Topic` fw uses. */
export interface GoogleTopicLike {
  /** Full resource name. */
  readonly name: string;
  /** Resolves to `[exists]`. */
  exists(): Promise<[boolean]>;
  /** Creates the topic. */
  create(): Promise<unknown>;
  /** Publishes one message; resolves to its id. */
  publishMessage(message: {
    data: Uint8Array;
    attributes?: { [key: string]: string };
    orderingKey?: string;
  }): Promise<string>;
  /** Resolves to `[subscriptions, ...]`. */
  getSubscriptions(): Promise<[unknown[], ...unknown[]]>;
  /** A subscription handle by name. */
  subscription(name: string): GoogleSubscriptionLike;
  /** Creates a subscription; resolves to `[subscription, ...]`. */
  createSubscription(
    name: string,
    options?: { [key: string]: unknown },
  ): Promise<[GoogleSubscriptionLike, ...unknown[]]>;
}

/** The members of a Pub/Sub `PubSub` client fw uses. */
export interface GooglePubSubLike {
  /** A topic handle by name. */
  topic(name: string): GoogleTopicLike;
  /** Closes the client. */
  close(): Promise<void>;
}

/** Options of {@linkcode googlePubSubClient}. */
export interface GooglePubSubClientOptions {
  /** Prepended to every topic name (default none). */
  topicPrefix?: string;
  /**
   * A topic for the subscriptions' dead-letter policy. Pub/Sub counts delivery attempts only when
   * a subscription has one; fw dead-letters to `<topic>.dlq` itself before Pub/Sub would forward.
   */
  deadLetterTopic?: string;
  /** Retry policy bounds of created subscriptions, in seconds (default 1 and 60). */
  retryBackoffSeconds?: { min: number; max: number };
  /** Whether `close()` closes the `PubSub` client (default `false`: it is yours). */
  closePubSub?: boolean;
  /**
   * Receives a subscription's stream errors (the client library keeps reconnecting); by default
   * they are written to `console.error`.
   */
  onError?: (error: Error, subscription: string) => void;
}

/**
 * Adapts a Google Cloud Pub/Sub `PubSub` instance to {@linkcode CloudPubSubClient}.
 *
 * @param pubsub A `PubSub` from npm `@google-cloud/pubsub` (or any object of that shape).
 * @param options Topic prefix, dead-letter topic, retry policy.
 * @returns The client.
 * @example
 * ```ts ignore
 * import { PubSub } from "@google-cloud/pubsub";
 * import { cloudPubSubTransport, googlePubSubClient } from "@fw/events/cloud";
 * const transport = cloudPubSubTransport({
 *   client: googlePubSubClient(new PubSub(), { deadLetterTopic: "fw-dead-letters" }),
 * });
 * ```
 */
export function googlePubSubClient(
  pubsub: GooglePubSubLike,
  options: GooglePubSubClientOptions = {},
): CloudPubSubClient {
  const prefix = options.topicPrefix ?? "";
  const backoff = options.retryBackoffSeconds ?? { min: 1, max: 60 };
  const onError = options.onError ??
    ((err: Error, name: string) =>
      console.error(`Google Cloud Pub/Sub subscription "${name}" failed: ${err.message}`));
  const ensured = new Map<string, Promise<GoogleTopicLike>>();
  const subs = new Set<CloudSubscription>();
  const topic = (name: string): Promise<GoogleTopicLike> => {
    let p = ensured.get(name);
    if (!p) {
      const t = pubsub.topic(prefix + name);
      p = t.exists().then(async ([exists]) => {
        if (!exists) await t.create();
        return t;
      });
      p.catch(() => ensured.delete(name));
      ensured.set(name, p);
    }
    return p;
  };
  return {
    system: "gcp_pubsub",
    async publish(name: string, data: Uint8Array, o: CloudPublishOptions): Promise<string> {
      const t = await topic(name);
      return await t.publishMessage({
        data,
        attributes: { ...o.attributes },
        ...(o.orderingKey !== undefined ? { orderingKey: o.orderingKey } : {}),
      });
    },
    async subscribe(
      o: CloudSubscribeOptions,
      onMessage: (message: CloudMessage) => void,
    ): Promise<CloudSubscription> {
      const t = await topic(o.topic);
      const subName = prefix + o.subscription;
      let sub = t.subscription(subName);
      const [exists] = await sub.exists();
      if (!exists) {
        const dlq = options.deadLetterTopic;
        [sub] = await t.createSubscription(subName, {
          retryPolicy: {
            minimumBackoff: { seconds: backoff.min },
            maximumBackoff: { seconds: backoff.max },
          },
          ...(dlq
            ? {
              deadLetterPolicy: {
                deadLetterTopic: pubsub.topic(dlq).name,
                maxDeliveryAttempts: Math.min(100, Math.max(5, o.maxDeliveries)),
              },
            }
            : {}),
          ...(o.ephemeral ? { expirationPolicy: { ttl: { seconds: 24 * 3600 } } } : {}),
        });
      }
      sub.on("message", (m) =>
        onMessage({
          id: m.id,
          data: m.data,
          attributes: m.attributes ?? {},
          deliveryAttempt: m.deliveryAttempt,
          ack: () => m.ack(),
          nack: () => m.nack(),
        }));
      sub.on("error", (err) => onError(err, subName));
      const handle: CloudSubscription = {
        async close() {
          if (!subs.delete(handle)) return;
          await sub.close();
          if (o.ephemeral) await sub.delete();
        },
      };
      subs.add(handle);
      return handle;
    },
    async hasSubscriptions(name: string): Promise<boolean> {
      const t = pubsub.topic(prefix + name);
      const [exists] = await t.exists();
      if (!exists) return false;
      const [list] = await t.getSubscriptions();
      return list.length > 0;
    },
    async close(): Promise<void> {
      await Promise.all([...subs].map((s) => s.close()));
      if (options.closePubSub) await pubsub.close();
    },
  };
}
