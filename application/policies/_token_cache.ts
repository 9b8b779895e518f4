/**
 * Verified tokens by their string, until they expire: what keeps `oauth()` cheap for a client
 * that sends the same token on every request. Bounded: at the limit the oldest entry goes.
 * Internal.
 *
 * @module
 */

import type { AuthUser } from "@fw/runtime";

/** The context values of a verified token, shared by every request that sends it. */
export interface TokenValues {
  /** The identity. */
  readonly user: AuthUser;
}

interface Entry {
  readonly values: TokenValues;
  readonly expiresAt: number;
}

/** A bounded map from token to identity, each entry living until its token expires. */
export class TokenCache {
  readonly #entries = new Map<string, Entry>();
  readonly #max: number;
  readonly #ttlMs: number;
  readonly #toleranceMs: number;

  /**
   * @param max Most entries (0 turns caching off).
   * @param ttlMs Longest life of an entry.
   * @param toleranceSec Clock tolerance added to `exp`, in seconds.
   */
  constructor(max: number, ttlMs: number, toleranceSec: number) {
    this.#max = max;
    this.#ttlMs = ttlMs;
    this.#toleranceMs = toleranceSec * 1000;
  }

  /** Number of cached tokens. */
  get size(): number {
    return this.#entries.size;
  }

  /**
   * The context values (`{ user }`) of a cached, unexpired token.
   *
   * @param token The token.
   * @param now The current time in ms.
   * @returns The values, or `undefined`.
   */
  get(token: string, now: number): TokenValues | undefined {
    const entry = this.#entries.get(token);
    if (entry === undefined) return undefined;
    if (entry.expiresAt > now) return entry.values;
    this.#entries.delete(token);
    return undefined;
  }

  /**
   * Caches a verified token.
   *
   * @param token The token.
   * @param user Its identity.
   * @param exp Its `exp` claim in seconds, if any.
   * @param now The current time in ms.
   */
  set(token: string, user: AuthUser, exp: number | undefined, now: number): void {
    if (this.#max === 0) return;
    let expiresAt = now + this.#ttlMs;
    if (typeof exp === "number") expiresAt = Math.min(expiresAt, exp * 1000 + this.#toleranceMs);
    if (expiresAt <= now) return;
    const entries = this.#entries;
    entries.delete(token);
    if (entries.size >= this.#max) {
      for (const [old, e] of entries) {
        if (entries.size < this.#max && e.expiresAt > now) break;
        entries.delete(old);
      }
    }
    entries.set(token, { values: Object.freeze({ user }), expiresAt });
  }
}
