/**
 * `@fw/events/cloud`: fw handlers on a managed or clustered pub/sub engine through a structural
 * client, with no vendor SDK as a dependency. {@linkcode cloudPubSubTransport} takes any
 * {@linkcode CloudPubSubClient}: `natsJetStreamClient()` from `@fw/events/cloud-nats` (NATS
 * JetStream), {@linkcode googlePubSubClient} over a `@google-cloud/pubsub` `PubSub` you create, or
 * an adapter of your own. A successful handler acks, a failed one nacks with fw's back-off delay,
 * the engine's delivery count is `eventAttempt`, and dead letters go to `<topic>.dlq`.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { cloudPubSubTransport } from "@fw/events/cloud";
 * assert.throws(
 *   () => cloudPubSubTransport({ client: {} as never }),
 *   /missing method "publish"/,
 * );
 * ```
 *
 * @module
 */

export {
  assertCloudPubSubClient,
  type CloudMessage,
  type CloudPublishOptions,
  type CloudPubSubClient,
  type CloudSubscribeOptions,
  type CloudSubscription,
  type CloudSubscriptionStats,
} from "./transports/cloud/client.ts";
export {
  CloudPubSubTransport,
  cloudPubSubTransport,
  type CloudPubSubTransportOptions,
} from "./transports/cloud/cloud_pubsub.ts";
export {
  type GoogleMessageLike,
  googlePubSubClient,
  type GooglePubSubClientOptions,
  type GooglePubSubLike,
  type GoogleSubscriptionLike,
  type GoogleTopicLike,
} from "./transports/cloud/google_pubsub.ts";
