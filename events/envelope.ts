/**
 * The message envelope that travels through transports: the payload plus the publish metadata.
 * The delivery attempt is not part of the envelope; transports carry it beside it.
 *
 * @module
 */

/** One published message as transports carry it. */
export interface Envelope {
  /** Message id (`messageId` publish option, else a random UUID). */
  id: string;
  /** Topic name. */
  topic: string;
  /** The validated payload (JSON-compatible). */
  payload: unknown;
  /** String attributes, including the `auth.*` attributes captured by the publisher. */
  attributes: Record<string, string>;
  /** W3C trace id (32 lowercase hex characters). */
  traceId: string;
  /**
   * W3C `traceparent` of the publish span, when tracing is on: a handler's span continues it
   * (and honours its sampled flag) on whatever transport carried the message.
   */
  traceparent?: string;
  /** W3C `tracestate` that goes with {@linkcode Envelope.traceparent}. */
  tracestate?: string;
  /** Ordering/partition key. */
  key?: string;
  /** De-duplication key. */
  dedupeKey?: string;
  /** The topic's logical channel (wire field `channel`). */
  channel?: string;
  /** The topic's contract version. */
  version?: string;
  /** Publish time in milliseconds since the epoch. */
  publishedAt: number;
}

/**
 * A new random W3C trace id.
 *
 * @returns 32 lowercase hex characters.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { newTraceId } from "@fw/events";
 * assert.match(newTraceId(), /^[0-9a-f]{32}$/);
 * ```
 */
export function newTraceId(): string {
  if (poolAt + 16 > POOL_SIZE) {
    webCrypto.getRandomValues(pool);
    poolAt = 0;
  }
  const codes = traceCodes;
  for (let i = 0; i < 16; i++) {
    const byte = pool[poolAt + i];
    codes[2 * i] = HEX_CODES[2 * byte];
    codes[2 * i + 1] = HEX_CODES[2 * byte + 1];
  }
  poolAt += 16;
  // One flat string: a chain of `+=` would leave a tree of partial strings that the async
  // context of every handler keeps alive past young-generation collections.
  return String.fromCharCode.apply(null, codes);
}

/**
 * A new random message id (a version 4 UUID from `crypto.randomUUID()`).
 *
 * @returns A lowercase UUID.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { newMessageId } from "@fw/events";
 * assert.match(newMessageId(), /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
 * ```
 */
export function newMessageId(): string {
  return webCrypto.randomUUID();
}

/** `crypto`, read once: the global is a getter, and this runs once per publish. */
const webCrypto: Crypto = crypto;

// Random bytes are drawn 4 KiB at a time: a trace id per publish is on the hot path.
const POOL_SIZE = 4096;
const pool = new Uint8Array(POOL_SIZE);
let poolAt = POOL_SIZE;
/** The two character codes of each byte's lowercase hex form. */
const HEX_CODES = new Uint8Array(512);
for (let i = 0; i < 256; i++) {
  const hex = i.toString(16).padStart(2, "0");
  HEX_CODES[2 * i] = hex.charCodeAt(0);
  HEX_CODES[2 * i + 1] = hex.charCodeAt(1);
}
const traceCodes: number[] = new Array(32).fill(0);

function isStringMap(value: unknown): value is Record<string, string> {
  if (typeof value !== "object" || value === null || Array.isArray(value)) return false;
  for (const k in value) {
    if (typeof (value as Record<string, unknown>)[k] !== "string") return false;
  }
  return true;
}

/**
 * Checks that a value received from a transport is a well-formed envelope.
 *
 * @param value What arrived.
 * @returns `undefined` when it is valid, else the reason it is not.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { envelopeProblem } from "@fw/events";
 * assert.equal(envelopeProblem({ id: 1 }), 'envelope field "id" must be a non-empty string');
 * ```
 */
export function envelopeProblem(value: unknown): string | undefined {
  if (typeof value !== "object" || value === null || Array.isArray(value)) {
    return "envelope must be an object";
  }
  // Straight-line checks: every delivery of every transport passes here.
  const e = value as Record<string, unknown>;
  if (typeof e.id !== "string" || e.id === "") return requiredString("id");
  if (typeof e.topic !== "string" || e.topic === "") return requiredString("topic");
  if (typeof e.traceId !== "string" || e.traceId === "") return requiredString("traceId");
  if (!("payload" in e)) return 'envelope field "payload" is required';
  if (!isStringMap(e.attributes)) return 'envelope field "attributes" must be a map of strings';
  if (typeof e.publishedAt !== "number" || !Number.isFinite(e.publishedAt)) {
    return 'envelope field "publishedAt" must be a number';
  }
  if (e.key !== undefined && typeof e.key !== "string") return optionalString("key");
  if (e.dedupeKey !== undefined && typeof e.dedupeKey !== "string") {
    return optionalString("dedupeKey");
  }
  if (e.channel !== undefined && typeof e.channel !== "string") return optionalString("channel");
  if (e.version !== undefined && typeof e.version !== "string") return optionalString("version");
  if (e.traceparent !== undefined && typeof e.traceparent !== "string") {
    return optionalString("traceparent");
  }
  if (e.tracestate !== undefined && typeof e.tracestate !== "string") {
    return optionalString("tracestate");
  }
  return undefined;
}

function requiredString(field: string): string {
  return `envelope field "${field}" must be a non-empty string`;
}

function optionalString(field: string): string {
  return `envelope field "${field}" must be a string`;
}
