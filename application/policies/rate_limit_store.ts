/**
 * Where `.rateLimit()` counts requests: the {@linkcode RateLimitStore} interface and the default
 * in-memory store. The Redis store, for several instances sharing one limit, is at
 * `@fw/application/redis-rate-limit`.
 *
 * Windows are fixed: a key's window opens at its first request and lasts `windowMs`; the count
 * starts again after it.
 *
 * @module
 */

import { type Clock, systemClock } from "@fw/runtime";

/** The state of a key's window after one request was counted. */
export interface RateLimitHit {
  /** Requests counted in the current window, this one included. */
  readonly count: number;
  /** Milliseconds until the window ends (0 or more). */
  readonly resetMs: number;
}

/**
 * Counts requests per key in fixed windows. Implementations must count atomically: two
 * concurrent hits never read the same count.
 */
export interface RateLimitStore {
  /**
   * Counts one request for `key`, opening a window of `windowMs` when none is open.
   *
   * @param key The route and client key.
   * @param windowMs The window length.
   * @returns The count and the time left in the window (synchronously, or as a promise).
   */
  hit(key: string, windowMs: number): RateLimitHit | Promise<RateLimitHit>;
}

/** Options of {@linkcode MemoryRateLimitStore}. */
export interface MemoryRateLimitStoreOptions {
  /** Time source (default: the system clock; the application passes its own). */
  readonly clock?: Clock;
  /**
   * Most keys held at once (default 10,000). At the limit the oldest window is dropped, which
   * lets that client start a fresh window early: memory stays bounded under a flood of keys.
   */
  readonly maxKeys?: number;
}

interface Window {
  count: number;
  resetAt: number;
}

/** Default {@linkcode MemoryRateLimitStoreOptions.maxKeys}. */
export const DEFAULT_RATE_LIMIT_MAX_KEYS = 10_000;

/**
 * The in-memory store: a map from key to window, with bounded memory. Windows are kept in the
 * order they opened; each hit evicts a few expired windows from the front, and the oldest window
 * is dropped when `maxKeys` is reached. No timers: nothing to stop. One store per process, so
 * several instances of an app each count on their own (use the Redis store to share a limit).
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { ManualClock } from "@fw/runtime";
 * import { MemoryRateLimitStore } from "@fw/application/rate-limit";
 *
 * const clock = new ManualClock(0);
 * const store = new MemoryRateLimitStore({ clock });
 * assert.deepEqual(store.hit("GET /a|10.0.0.1", 1000), { count: 1, resetMs: 1000 });
 * await clock.advance(400);
 * assert.deepEqual(store.hit("GET /a|10.0.0.1", 1000), { count: 2, resetMs: 600 });
 * await clock.advance(600);
 * assert.deepEqual(store.hit("GET /a|10.0.0.1", 1000), { count: 1, resetMs: 1000 });
 * ```
 */
export class MemoryRateLimitStore implements RateLimitStore {
  readonly #clock: Clock;
  readonly #maxKeys: number;
  readonly #windows = new Map<string, Window>();

  /**
   * Creates an empty store.
   *
   * @param options Clock and key bound.
   * @throws {RangeError} When `maxKeys` is not a positive integer.
   */
  constructor(options: MemoryRateLimitStoreOptions = {}) {
    this.#clock = options.clock ?? systemClock;
    const maxKeys = options.maxKeys ?? DEFAULT_RATE_LIMIT_MAX_KEYS;
    if (!Number.isInteger(maxKeys) || maxKeys < 1) {
      throw new RangeError(
        `Invalid MemoryRateLimitStore option "maxKeys": expected a positive integer, got ${maxKeys}`,
      );
    }
    this.#maxKeys = maxKeys;
  }

  /** Number of windows held (expired ones may linger until the next hits evict them). */
  get size(): number {
    return this.#windows.size;
  }

  /**
   * Counts one request for `key`.
   *
   * @param key The key.
   * @param windowMs The window length in milliseconds.
   * @returns The count in the window and the time left.
   */
  hit(key: string, windowMs: number): RateLimitHit {
    const now = this.#clock.now();
    const windows = this.#windows;
    let w = windows.get(key);
    if (w !== undefined && w.resetAt <= now) {
      windows.delete(key);
      w = undefined;
    }
    if (w === undefined) {
      this.#evict(now);
      w = { count: 0, resetAt: now + windowMs };
      windows.set(key, w);
    }
    w.count++;
    return { count: w.count, resetMs: w.resetAt - now };
  }

  #evict(now: number): void {
    const windows = this.#windows;
    let n = 0;
    for (const [key, w] of windows) {
      if (w.resetAt > now && windows.size < this.#maxKeys) break;
      windows.delete(key);
      if (++n >= 8 && windows.size < this.#maxKeys) break;
    }
  }
}
