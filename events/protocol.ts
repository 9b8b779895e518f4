/**
 * `@fw/events/protocol`: the `fw.events.v1` wire protocol of the Event Server, for servers,
 * clients and conformance tools in any language. The protocol text is `protocol/PROTOCOL.md`,
 * the JSON Schemas are `protocol/schemas/*.json` (also exported here as
 * {@linkcode PROTOCOL_SCHEMAS}), and `protocol/manifest.json` lists the conformance steps.
 * Browser-safe: nothing here uses `Deno.*`.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { EVENTS_PROTOCOL, type EventServerFrame, parseClientFrame } from "@fw/events/protocol";
 * const hello: EventServerFrame = { type: "hello", protocol: EVENTS_PROTOCOL };
 * assert.equal(parseClientFrame(JSON.stringify(hello)).ok, true);
 * ```
 *
 * @module
 */

export {
  type ClientFrame,
  DISCOVERY_PATH,
  type DiscoveryDocument,
  type DiscoveryTopic,
  type ErrorFrame,
  type EventFrame,
  EVENTS_CLOSE_CODES,
  EVENTS_PROTOCOL,
  type EventServerFrame,
  type GapFrame,
  type HelloFrame,
  HTTP_ERRORS,
  type HttpErrorBody,
  type HttpErrorCode,
  type PingFrame,
  type PongFrame,
  type PublishOutcome,
  type PublishRequest,
  type PublishResponse,
  type PublishResult,
  type ServerFrame,
  type SubscribedFrame,
  type SubscribeFrame,
  type UnsubscribedFrame,
  type UnsubscribeFrame,
  type WelcomeFrame,
  type WsErrorCode,
} from "./protocol/frames.ts";
export {
  checkServerFrame,
  parseClientFrame,
  type ParsedClientFrame,
  PROTOCOL_SCHEMAS,
  type ProtocolSchemaName,
  type SchemaIssue,
  validateProtocolValue,
} from "./protocol/schemas.ts";
