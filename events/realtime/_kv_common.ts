/**
 * What the Redis realtime brokers (`kvStream`, `kvPubSub`) share: option checks and Redis stream
 * ids, the connections opened on first use (topic names and payload checks are in `_fanout.ts`).
 *
 * @module
 */

import { openRedis, type RedisConnections, type RedisSource } from "../_redis.ts";

/**
 * A broker's Redis connections, opened on first use. A failed attempt is forgotten, so the next
 * call tries again; after {@linkcode LazyRedis.close} every call rejects.
 */
export class LazyRedis {
  readonly #owner: string;
  readonly #source: RedisSource;
  #open: Promise<RedisConnections> | undefined;
  #closed = false;

  /** @param owner Name for messages (`kvStream()`). @param source The URL or the client. */
  constructor(owner: string, source: RedisSource) {
    this.#owner = owner;
    this.#source = source;
  }

  /** True once {@linkcode LazyRedis.close} was called. */
  get closed(): boolean {
    return this.#closed;
  }

  /** The connections, opening them on the first call. */
  get(): Promise<RedisConnections> {
    if (this.#closed) return Promise.reject(new Error("Realtime broker is closed"));
    this.#open ??= openRedis(this.#owner, this.#source).catch((error) => {
      this.#open = undefined; // the next call tries again
      throw error;
    });
    return this.#open;
  }

  /**
   * Refuses further use at once.
   *
   * @returns False when it was already refused (a second `close()` of the broker).
   */
  refuse(): boolean {
    if (this.#closed) return false;
    this.#closed = true;
    return true;
  }

  /** Refuses further use and closes the connections, if they were opened. */
  async close(): Promise<void> {
    this.#closed = true;
    const redis = await this.#open?.catch(() => undefined);
    await redis?.close();
  }
}

/** Checks `keyPrefix` (default `fallback`) and returns it. */
export function checkKeyPrefix(owner: string, value: unknown, fallback: string): string {
  const prefix = value ?? fallback;
  if (typeof prefix !== "string" || !prefix) {
    throw new TypeError(
      `Invalid ${owner} option "keyPrefix": expected a non-empty string, got "${String(prefix)}"`,
    );
  }
  return prefix;
}

/** Checks an integer option that must be at least `min`. */
export function checkInteger(owner: string, option: string, value: unknown, min: number): number {
  if (typeof value !== "number" || !Number.isSafeInteger(value) || value < min) {
    throw new RangeError(
      `Invalid ${owner} option "${option}": expected an integer >= ${min}, got "${String(value)}"`,
    );
  }
  return value;
}

/** Checks a positive duration in ms (`undefined` gives `Infinity`, no limit). */
export function checkDuration(owner: string, option: string, value: unknown): number {
  if (value === undefined) return Infinity;
  if (typeof value !== "number" || !(value > 0)) {
    throw new RangeError(
      `Invalid ${owner} option "${option}": expected a number > 0, got "${String(value)}"`,
    );
  }
  return value;
}

/** Encodes a payload for Redis (JSON; `undefined` becomes `null`). */
export function encodePayload(payload: unknown): string {
  return JSON.stringify(payload) ?? "null";
}

/** A Redis stream id as two numbers: milliseconds and sequence. */
export interface StreamId {
  readonly ms: number;
  readonly seq: number;
}

/** The smallest id, before anything a stream issues. */
export const ZERO_ID: StreamId = Object.freeze({ ms: 0, seq: 0 });

const ID = /^(\d{1,16})-(\d{1,16})$/;

/**
 * Parses `<ms>-<seq>`; `undefined` when malformed. Parts beyond 2^53 parse as `Infinity` (no Redis
 * clock gets there, so such an id is newer than any issued one).
 */
export function parseStreamId(id: string): StreamId | undefined {
  const match = typeof id === "string" ? ID.exec(id) : null;
  if (!match) return undefined;
  const ms = Number(match[1]), seq = Number(match[2]);
  return {
    ms: Number.isSafeInteger(ms) ? ms : Infinity,
    seq: Number.isSafeInteger(seq) ? seq : Infinity,
  };
}

/** Parses an id Redis gave us (always well formed). */
export function streamId(id: string): StreamId {
  const dash = id.indexOf("-");
  return { ms: Number(id.slice(0, dash)), seq: Number(id.slice(dash + 1)) };
}

/** Negative when `a` comes first, positive when `b` does, 0 when equal. */
export function compareStreamIds(a: StreamId, b: StreamId): number {
  return a.ms - b.ms || a.seq - b.seq;
}

/** The id as Redis writes it. */
export function formatStreamId(id: StreamId): string {
  return `${id.ms}-${id.seq}`;
}
