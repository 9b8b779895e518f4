/**
 * `@fw/events/client`: the browser and mobile client of the fw Event Server. One WebSocket for
 * every subscription, reconnect with full-jitter back-off and a fresh token, resume after the
 * last stream id with the server's `recovered` flag, payloads validated on receipt. It imports
 * nothing Deno-only and no server transport, so it bundles for browsers and React Native.
 *
 * @example
 * ```ts ignore
 * import { eventClient, isCompatibleEventServer } from "@fw/events/client";
 * const url = "wss://events.example/events/ws";
 * if (await isCompatibleEventServer(url)) {
 *   const client = eventClient({ url, token: async () => "Bearer " + (await login()) });
 *   client.subscribe("orders.created", (order) => console.log(order));
 * }
 * ```
 *
 * @module
 */

export {
  type ClientState,
  type EventClient,
  type EventClientOptions,
  type ReconnectOptions,
} from "./client/client_types.ts";
export { eventClient } from "./client/event_client.ts";
export { type DiscoveryDocument, type DiscoveryTopic, EVENTS_PROTOCOL } from "./protocol/frames.ts";
export { EventClientError, type EventClientErrorCode } from "./client/errors.ts";
export { discoveryUrl, isCompatibleEventServer, readDiscovery } from "./client/compatible.ts";
export {
  type ClientTopic,
  type EventMeta,
  type EventSubscription,
  type SubscribeOptions,
  type SubscriptionState,
} from "./client/subscription.ts";
