/**
 * `@fw/events/cloud-nats`: the NATS JetStream client for `cloudPubSubTransport()` from
 * `@fw/events/cloud`. It lives on its own sub-path because it loads the npm NATS client
 * (`@nats-io/jetstream`, `@nats-io/transport-node`); `@fw/events/cloud` loads no npm package.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { natsJetStreamClient } from "@fw/events/cloud-nats";
 * assert.throws(() => natsJetStreamClient({}), /exactly one of "servers" and "connection"/);
 * ```
 *
 * @module
 */

export {
  type NatsConnectionLike,
  natsConsumerName,
  NatsJetStreamClient,
  natsJetStreamClient,
  type NatsJetStreamClientOptions,
} from "./transports/cloud/nats_jetstream.ts";
