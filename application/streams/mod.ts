/**
 * `@fw/application/streams`: the building blocks under stream endpoints, for code that drives
 * them directly: `SseStream` (a Server-Sent Events body with back-pressure and heartbeats),
 * `WebSocketChannel` (a validated JSON channel over a server WebSocket), `CloseCode`,
 * `encodeSseEvent()`, `compileStreamEndpoint()` and `checkStreamOptions()`.
 *
 * Stream endpoints themselves need none of this: declare them with `endpoint()` and a
 * `Stream()` body or return type, and `api()` loads this code at warmup when a route is a
 * stream. An application without stream routes never loads it, which keeps its cold start short.
 * Importing this module also lets `compileEndpoint()` compile stream definitions directly.
 *
 * @example Encode one SSE event
 * ```ts
 * import assert from "node:assert/strict";
 * import { encodeSseEvent } from "@fw/application/streams";
 *
 * assert.equal(encodeSseEvent("hi", { event: "greeting" }), "event: greeting\ndata: hi\n\n");
 * ```
 *
 * @module
 */

export { compileStreamEndpoint } from "./compile_stream.ts";
export { checkStreamOptions, type ResolvedStreamOptions, type StreamOptions } from "./options.ts";
export {
  DEFAULT_HEARTBEAT_MS,
  DEFAULT_SSE_HIGH_WATER_MARK,
  encodeSseEvent,
  type SseEventFields,
  type SseSendOptions,
  SseStream,
  type SseStreamOptions,
} from "./sse.ts";
export {
  CloseCode,
  type CloseInfo,
  DEFAULT_IDLE_TIMEOUT_MS,
  DEFAULT_MAX_MESSAGE_BYTES,
  DEFAULT_MAX_QUEUED_MESSAGES,
  DEFAULT_WS_HIGH_WATER_MARK,
  type ErrorEnvelope,
  WebSocketChannel,
  type WebSocketChannelOptions,
  WebSocketClosedError,
} from "./websocket.ts";
