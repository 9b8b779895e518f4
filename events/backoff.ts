/**
 * Retry delays: retry n waits `min(1000 * 2^(n-1), maxBackoff)` ms,
 * reduced by a random part of up to `jitter` of that delay, never above `maxBackoff`.
 *
 * @module
 */

/**
 * The delay before retry `n`.
 *
 * @param n 1 for the first retry.
 * @param maxBackoff Cap in ms.
 * @param jitter Fraction (0..1) by which the delay may randomly shrink.
 * @param random Source of randomness in [0, 1) (default `Math.random`).
 * @returns Milliseconds to wait.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { retryDelay } from "@fw/events";
 * assert.deepEqual([1, 2, 3, 4].map((n) => retryDelay(n, 60_000, 0)), [1000, 2000, 4000, 8000]);
 * assert.equal(retryDelay(10, 60_000, 0), 60_000);
 * assert.equal(retryDelay(1, 60_000, 0.1, () => 0.5), 950);
 * ```
 */
export function retryDelay(
  n: number,
  maxBackoff: number,
  jitter: number,
  random: () => number = Math.random,
): number {
  const exp = Math.min(Math.max(n, 1) - 1, 60);
  const base = Math.min(1000 * 2 ** exp, maxBackoff);
  if (jitter <= 0) return base;
  return Math.max(0, Math.round(base - base * jitter * random()));
}
