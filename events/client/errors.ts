/**
 * `EventClientError`: what the browser client reports through its `onError` callbacks.
 *
 * @module
 */

/**
 * Stable codes of {@linkcode EventClientError}:
 *
 * | code | when |
 * | --- | --- |
 * | `incompatible_server` | the discovery document is not an fw Event Server's (`fw.events.v1`); the client stops |
 * | `token_failed` | the `token` function threw or returned nothing; the client retries with back-off |
 * | `unauthorized`, `forbidden`, `unknown_topic`, `unknown_cursor`, ... | the server refused a frame (its `error` code) |
 * | `invalid_payload` | an event's payload failed the topic schema; it is not delivered |
 * | `invalid_frame` | the server sent a frame the client does not understand; it is ignored |
 * | `callback_failed` | a callback of yours threw; the client carries on |
 * | `connection_lost` | the WebSocket closed; the client reconnects with back-off when allowed |
 */
export type EventClientErrorCode =
  | "incompatible_server"
  | "token_failed"
  | "invalid_payload"
  | "invalid_frame"
  | "callback_failed"
  | "connection_lost"
  | (string & Record<never, never>);

/**
 * An error the client reports (never throws into your callbacks).
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { EventClientError } from "@fw/events/client";
 * const e = new EventClientError("token_failed", "The token function threw: offline");
 * assert.equal(e.code, "token_failed");
 * ```
 */
export class EventClientError extends Error {
  /** Stable code (see {@linkcode EventClientErrorCode}). */
  readonly code: EventClientErrorCode;
  /** The subscription's topic, when the error is about one. */
  readonly topic?: string;

  /**
   * Creates the error.
   *
   * @param code Stable code.
   * @param message Human-readable detail.
   * @param topic The topic concerned.
   */
  constructor(code: EventClientErrorCode, message: string, topic?: string) {
    super(message);
    this.name = "EventClientError";
    this.code = code;
    if (topic !== undefined) this.topic = topic;
  }
}
