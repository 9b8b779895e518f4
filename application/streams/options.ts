/**
 * Settings of stream connections (`api({ streams })`): heartbeats and queue bounds of Server-Sent
 * Events, and the limits of WebSocket channels. Checked once per route at start-up.
 *
 * @module
 */

import { DEFAULT_HEARTBEAT_MS, DEFAULT_SSE_HIGH_WATER_MARK } from "./sse.ts";
import {
  DEFAULT_IDLE_TIMEOUT_MS,
  DEFAULT_MAX_MESSAGE_BYTES,
  DEFAULT_MAX_QUEUED_MESSAGES,
  DEFAULT_WS_HIGH_WATER_MARK,
} from "./websocket.ts";

/** Stream connection settings; every field is optional. */
export interface StreamOptions {
  /** Milliseconds between SSE heartbeat comments; 0 turns them off. Default 15 000. */
  heartbeatMs?: number;
  /** SSE `retry:` sent first (the browser's reconnection delay); default none. */
  retryMs?: number;
  /** Unsent SSE text (about bytes) before `ctx.send()` waits for the client. Default 64 KiB. */
  sseHighWaterMark?: number;
  /** Largest incoming WebSocket message in bytes; larger closes with 1009. Default 1 MiB. */
  maxMessageBytes?: number;
  /** Received WebSocket messages that may wait unread; more closes with 1008. Default 256. */
  maxQueuedMessages?: number;
  /** WebSocket idle timeout (no message either way) in ms; 0 disables. Default 300 000. */
  idleTimeoutMs?: number;
  /** WebSocket `bufferedAmount` above which `ctx.send()` waits. Default 1 MiB. */
  wsHighWaterMark?: number;
}

/** {@linkcode StreamOptions} with the defaults filled in. */
export interface ResolvedStreamOptions {
  /** See {@linkcode StreamOptions.heartbeatMs}. */
  readonly heartbeatMs: number;
  /** See {@linkcode StreamOptions.retryMs}. */
  readonly retryMs: number | undefined;
  /** See {@linkcode StreamOptions.sseHighWaterMark}. */
  readonly sseHighWaterMark: number;
  /** See {@linkcode StreamOptions.maxMessageBytes}. */
  readonly maxMessageBytes: number;
  /** See {@linkcode StreamOptions.maxQueuedMessages}. */
  readonly maxQueuedMessages: number;
  /** See {@linkcode StreamOptions.idleTimeoutMs}. */
  readonly idleTimeoutMs: number;
  /** See {@linkcode StreamOptions.wsHighWaterMark}. */
  readonly wsHighWaterMark: number;
}

const MINIMUM: Record<keyof StreamOptions, number> = {
  heartbeatMs: 0,
  retryMs: 0,
  sseHighWaterMark: 1,
  maxMessageBytes: 1,
  maxQueuedMessages: 1,
  idleTimeoutMs: 0,
  wsHighWaterMark: 1,
};

/**
 * Checks stream settings and fills in the defaults.
 *
 * @param options The settings (`api({ streams })`), or undefined for the defaults.
 * @param where What the settings are for (named in errors), for example `GET /feed`.
 * @returns The settings with every default filled in.
 * @throws {TypeError} For an unknown option or a value that is not a finite number at or above its
 *   minimum (0 for time-outs and intervals, 1 for sizes and counts).
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { checkStreamOptions } from "@fw/application/streams";
 * assert.equal(checkStreamOptions({ heartbeatMs: 5000 }, "GET /feed").heartbeatMs, 5000);
 * assert.equal(checkStreamOptions(undefined, "GET /feed").maxQueuedMessages, 256);
 * assert.throws(() => checkStreamOptions({ heartbeatMs: -1 }, "GET /feed"), /"heartbeatMs"/);
 * ```
 */
export function checkStreamOptions(
  options: StreamOptions | undefined,
  where: string,
): ResolvedStreamOptions {
  const given = options ?? {};
  if (typeof given !== "object" || given === null) {
    throw new TypeError(`Invalid stream options for "${where}": expected an object`);
  }
  for (const [key, value] of Object.entries(given)) {
    if (!(key in MINIMUM)) {
      throw new TypeError(
        `Invalid stream option "${key}" for "${where}": expected one of ${
          Object.keys(MINIMUM).join(", ")
        }`,
      );
    }
    const min = MINIMUM[key as keyof StreamOptions];
    if (value === undefined) continue;
    if (typeof value !== "number" || !Number.isFinite(value) || value < min) {
      throw new TypeError(
        `Invalid stream option "${key}" for "${where}": expected a number >= ${min}, got ${
          JSON.stringify(value)
        }`,
      );
    }
  }
  return Object.freeze({
    heartbeatMs: given.heartbeatMs ?? DEFAULT_HEARTBEAT_MS,
    retryMs: given.retryMs,
    sseHighWaterMark: given.sseHighWaterMark ?? DEFAULT_SSE_HIGH_WATER_MARK,
    maxMessageBytes: given.maxMessageBytes ?? DEFAULT_MAX_MESSAGE_BYTES,
    maxQueuedMessages: given.maxQueuedMessages ?? DEFAULT_MAX_QUEUED_MESSAGES,
    idleTimeoutMs: given.idleTimeoutMs ?? DEFAULT_IDLE_TIMEOUT_MS,
    wsHighWaterMark: given.wsHighWaterMark ?? DEFAULT_WS_HIGH_WATER_MARK,
  });
}
