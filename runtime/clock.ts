/**
 * Time as a dependency. Retries, back-off, rate-limit windows, heartbeats and time-outs take a
 * {@linkcode Clock} so tests can drive them with a {@linkcode ManualClock} instead of sleeping.
 *
 * @module
 */

/** Opaque handle returned by {@linkcode Clock.setTimeout}. */
export type TimerHandle = number | { readonly id: number };

/** A source of time and timers. */
export interface Clock {
  /** Milliseconds since the Unix epoch. */
  now(): number;
  /** Runs `fn` once after `ms` milliseconds. */
  setTimeout(fn: () => void, ms: number): TimerHandle;
  /** Cancels a timer; unknown or fired handles are ignored. */
  clearTimeout(handle: TimerHandle): void;
}

/**
 * The real clock: `Date.now()` and the global timers.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { systemClock } from "@fw/runtime";
 * assert.ok(systemClock.now() > 0);
 * ```
 */
export const systemClock: Clock = {
  now: () => Date.now(),
  setTimeout: (fn, ms) => setTimeout(fn, ms) as unknown as TimerHandle,
  clearTimeout: (handle) => clearTimeout(handle as Parameters<typeof clearTimeout>[0]),
};

interface ManualTimer {
  readonly id: number;
  readonly at: number;
  readonly fn: () => void;
}

/**
 * A clock that only moves when told to. `advance(ms)` fires every timer that falls due, in time
 * order, letting promise callbacks settle between timers so async code scheduled by one timer
 * can register the next.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { ManualClock } from "@fw/runtime";
 * const clock = new ManualClock(0);
 * const fired: number[] = [];
 * clock.setTimeout(() => fired.push(clock.now()), 1000);
 * await clock.advance(999);
 * assert.deepEqual(fired, []);
 * await clock.advance(1);
 * assert.deepEqual(fired, [1000]);
 * ```
 */
export class ManualClock implements Clock {
  #now: number;
  #next = 1;
  #timers: ManualTimer[] = [];

  /**
   * Creates a clock stopped at `start`.
   *
   * @param start The initial time in milliseconds since the epoch.
   */
  constructor(start = 0) {
    this.#now = start;
  }

  /** The current manual time. */
  now(): number {
    return this.#now;
  }

  /** Schedules `fn` at `now() + ms` (negative or NaN delays count as 0). */
  setTimeout(fn: () => void, ms: number): TimerHandle {
    const id = this.#next++;
    const delay = Number.isFinite(ms) && ms > 0 ? ms : 0;
    this.#timers.push({ id, at: this.#now + delay, fn });
    return { id };
  }

  /** Removes a pending timer. */
  clearTimeout(handle: TimerHandle): void {
    const id = typeof handle === "number" ? handle : handle?.id;
    this.#timers = this.#timers.filter((t) => t.id !== id);
  }

  /** Number of timers not yet fired. */
  get pending(): number {
    return this.#timers.length;
  }

  /**
   * Moves time forward by `ms`, firing due timers in order and flushing microtasks and
   * already-queued macrotasks after each.
   *
   * @param ms Milliseconds to advance (default 0: only fire what is already due).
   * @returns A promise that settles when time has reached its target.
   */
  async advance(ms = 0): Promise<void> {
    const target = this.#now + Math.max(0, ms);
    await settle();
    for (;;) {
      let due: ManualTimer | undefined;
      for (const t of this.#timers) {
        if (t.at <= target && (!due || t.at < due.at || (t.at === due.at && t.id < due.id))) {
          due = t;
        }
      }
      if (!due) break;
      this.#timers = this.#timers.filter((t) => t !== due);
      this.#now = due.at;
      due.fn();
      await settle();
    }
    this.#now = target;
  }

  /**
   * Advances to the next pending timer and fires it (and any due at the same instant).
   *
   * @returns True when a timer fired.
   */
  async next(): Promise<boolean> {
    await settle();
    if (this.#timers.length === 0) return false;
    const at = Math.min(...this.#timers.map((t) => t.at));
    await this.advance(at - this.#now);
    return true;
  }

  /**
   * Fires timers until none is left (or `limit` have fired), advancing time as needed.
   *
   * @param limit Guard against timers that reschedule forever.
   * @returns How many rounds ran.
   */
  async runAll(limit = 10_000): Promise<number> {
    let n = 0;
    while (n < limit && await this.next()) n++;
    return n;
  }
}

async function settle(): Promise<void> {
  // Let promise chains started by a timer (and macrotasks they queue at 0 ms) run before the next.
  for (let i = 0; i < 3; i++) {
    await new Promise<void>((resolve) => setTimeout(resolve, 0));
  }
}
