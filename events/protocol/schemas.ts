/**
 * The JSON Schemas of `fw.events.v1` (the files in `schemas/`), and checks of values against
 * them: {@linkcode validateProtocolValue} for any body or frame, {@linkcode parseClientFrame} for
 * what a server receives and {@linkcode checkServerFrame} for what a client receives.
 *
 * @module
 */

import clientFrame from "./schemas/client-frame.json" with { type: "json" };
import discovery from "./schemas/discovery.json" with { type: "json" };
import error from "./schemas/error.json" with { type: "json" };
import event from "./schemas/event.json" with { type: "json" };
import gap from "./schemas/gap.json" with { type: "json" };
import hello from "./schemas/hello.json" with { type: "json" };
import httpError from "./schemas/http-error.json" with { type: "json" };
import ping from "./schemas/ping.json" with { type: "json" };
import pong from "./schemas/pong.json" with { type: "json" };
import publishRequest from "./schemas/publish-request.json" with { type: "json" };
import publishResponse from "./schemas/publish-response.json" with { type: "json" };
import serverFrame from "./schemas/server-frame.json" with { type: "json" };
import sseEvent from "./schemas/sse-event.json" with { type: "json" };
import sseSubscribed from "./schemas/sse-subscribed.json" with { type: "json" };
import subscribe from "./schemas/subscribe.json" with { type: "json" };
import subscribed from "./schemas/subscribed.json" with { type: "json" };
import unsubscribe from "./schemas/unsubscribe.json" with { type: "json" };
import unsubscribed from "./schemas/unsubscribed.json" with { type: "json" };
import welcome from "./schemas/welcome.json" with { type: "json" };
import { checkSchema, type JsonSchema, type SchemaIssue } from "./_json_schema.ts";
import {
  CLIENT_FRAME_TYPES,
  type ClientFrame,
  SERVER_FRAME_TYPES,
  type WsErrorCode,
} from "./frames.ts";

export type { SchemaIssue };

/** Names of the protocol's schemas (file names without `.json`). */
export type ProtocolSchemaName =
  | "client-frame"
  | "discovery"
  | "error"
  | "event"
  | "gap"
  | "hello"
  | "http-error"
  | "ping"
  | "pong"
  | "publish-request"
  | "publish-response"
  | "server-frame"
  | "sse-event"
  | "sse-subscribed"
  | "subscribe"
  | "subscribed"
  | "unsubscribe"
  | "unsubscribed"
  | "welcome";

/** Every schema of the protocol by name (JSON Schema draft 2020-12 documents). */
export const PROTOCOL_SCHEMAS: Readonly<
  Record<ProtocolSchemaName, Readonly<Record<string, unknown>>>
> = Object.freeze({
  "client-frame": clientFrame,
  discovery,
  error,
  event,
  gap,
  hello,
  "http-error": httpError,
  ping,
  pong,
  "publish-request": publishRequest,
  "publish-response": publishResponse,
  "server-frame": serverFrame,
  "sse-event": sseEvent,
  "sse-subscribed": sseSubscribed,
  subscribe,
  subscribed,
  unsubscribe,
  unsubscribed,
  welcome,
});

/** A valid subscription id: only such an id is echoed in an error frame. */
const SUB_ID = /^[A-Za-z0-9._:-]{1,64}$/;

const resolve = (ref: string): JsonSchema | undefined =>
  (PROTOCOL_SCHEMAS as Record<string, JsonSchema>)[ref.replace(/\.json$/, "")];

function isName(name: string): name is ProtocolSchemaName {
  return Object.hasOwn(PROTOCOL_SCHEMAS, name);
}

/**
 * Checks a value against one of the protocol's schemas.
 *
 * @param name The schema name (`subscribe`, `publish-request`, ...).
 * @param value The parsed JSON value.
 * @returns The problems found, each with a dotted field path; empty when the value is valid.
 * @throws {TypeError} For an unknown schema name.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { validateProtocolValue } from "@fw/events/protocol";
 * assert.deepEqual(validateProtocolValue("ping", { type: "ping" }), []);
 * assert.deepEqual(validateProtocolValue("subscribe", { type: "subscribe", sub: "a" }), [
 *   { field: "topic", message: "is required" },
 * ]);
 * ```
 */
export function validateProtocolValue(name: ProtocolSchemaName, value: unknown): SchemaIssue[] {
  if (!isName(name)) throw new TypeError(`Unknown protocol schema "${String(name)}"`);
  return checkSchema(PROTOCOL_SCHEMAS[name], value, resolve);
}

/** The result of {@linkcode parseClientFrame}. */
export type ParsedClientFrame =
  | { readonly ok: true; readonly frame: ClientFrame }
  | {
    readonly ok: false;
    readonly code: WsErrorCode;
    readonly message: string;
    readonly type?: string;
    readonly sub?: string;
  };

function describe(issues: readonly SchemaIssue[]): string {
  return issues.map((i) => `${i.field} ${i.message}`).join("; ");
}

/**
 * Parses and checks one WebSocket text frame a client sent: JSON, an object with a known `type`,
 * valid against that type's schema.
 *
 * @param text The frame's text.
 * @returns The frame, or the error code and message to answer with (and the frame's type and
 *   subscription id when they could be read).
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { parseClientFrame } from "@fw/events/protocol";
 * assert.deepEqual(parseClientFrame('{"type":"ping"}'), { ok: true, frame: { type: "ping" } });
 * const bad = parseClientFrame('{"type":"shout"}');
 * assert.equal(bad.ok || bad.code, "unknown_type");
 * ```
 */
export function parseClientFrame(text: string): ParsedClientFrame {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    return { ok: false, code: "invalid_json", message: "Frame is not valid JSON" };
  }
  if (typeof value !== "object" || value === null || Array.isArray(value)) {
    return { ok: false, code: "invalid_frame", message: "Frame must be a JSON object" };
  }
  const record = value as Record<string, unknown>;
  const type = record.type;
  const sub = typeof record.sub === "string" && SUB_ID.test(record.sub) ? record.sub : undefined;
  const known = { ...(sub !== undefined ? { sub } : {}) };
  if (typeof type !== "string") {
    return {
      ok: false,
      code: "invalid_frame",
      message: 'Frame field "type" is required and must be a string',
      ...known,
    };
  }
  const shown = type.length > 64 ? type.slice(0, 61) + "..." : type;
  if (!CLIENT_FRAME_TYPES.has(type)) {
    return {
      ok: false,
      code: "unknown_type",
      message: `Unknown frame type "${shown}": expected one of ${
        [...CLIENT_FRAME_TYPES].join(", ")
      }`,
      type: shown,
      ...known,
    };
  }
  const issues = checkSchema(resolve(type)!, value, resolve);
  if (issues.length > 0) {
    return {
      ok: false,
      code: "invalid_frame",
      message: `Invalid "${type}" frame: ${describe(issues)}`,
      type,
      ...known,
    };
  }
  return { ok: true, frame: value as ClientFrame };
}

/**
 * Checks a frame a server sent against the schema of its `type`.
 *
 * @param value The parsed frame.
 * @returns Problems, each naming the frame type (empty when valid).
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { checkServerFrame } from "@fw/events/protocol";
 * assert.deepEqual(checkServerFrame({ type: "subscribed", sub: "a", topic: "t", recovered: true }), []);
 * assert.deepEqual(checkServerFrame({ type: "subscribed", sub: "a", topic: "t" }), [
 *   'frame "subscribed": recovered is required',
 * ]);
 * ```
 */
export function checkServerFrame(value: unknown): string[] {
  const type = (value as { type?: unknown } | null)?.type;
  if (typeof type !== "string" || !SERVER_FRAME_TYPES.has(type)) {
    return [`frame ${JSON.stringify(type ?? null)}: not a server frame type`];
  }
  return checkSchema(resolve(type)!, value, resolve).map((i) =>
    `frame "${type}": ${i.field} ${i.message}`
  );
}
