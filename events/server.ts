/**
 * `@fw/events/server`: the Event Server plugin, `eventServer({...})`. It serves the
 * `fw.events.v1` protocol (see `@fw/events/protocol`) on an application: the discovery document
 * at `/.well-known/fw/events`, `POST /events/publish`, a multiplexed WebSocket endpoint and an SSE
 * endpoint per topic, fed by a realtime broker.
 *
 * @example
 * ```ts ignore
 * import { application, http } from "@fw/application";
 * import { oauth } from "@fw/application/oauth";
 * import { Int, topic } from "@fw/events";
 * import { eventServer } from "@fw/events/server";
 *
 * const Quotes = topic("market.quote", { price: Int });
 * const auth = oauth({ issuer: "https://id.example", audience: "api", jwksUrl: "https://id.example/jwks" });
 * await application()
 *   .use(http({ port: 8000 }))
 *   .use(auth)
 *   .use(eventServer({
 *     topics: [Quotes],
 *     verifyToken: auth.verify,
 *     access: (user, _topic, action) => action === "subscribe" || user?.roles.includes("feeder") === true,
 *   }))
 *   .start();
 * ```
 *
 * @module
 */

export {
  type AccessRule,
  eventServer,
  type EventServerOptions,
  type EventServerPlugin,
  type EventServerStats,
  type TopicAction,
} from "./server/event_server.ts";
