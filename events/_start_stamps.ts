/**
 * Start times of handler invocations, read from the clock once per tick instead of once per
 * message, for consumers that record no durations (see `Consumer`).
 *
 * Such a consumer needs a handler's start only for its time-out. It starts the handler without
 * reading the clock and asks the {@linkcode StartStamps} of its clock for a stamp; one timer per
 * clock, {@linkcode STAMP_TICK_MS} later, reads the clock once and hands that time to every
 * consumer that asked. The stamp is never earlier than the real start, so a time-out measured from
 * it never fires early, and fires late by at most the tick plus whatever delays the timer (an
 * event loop blocked before the tick, by the handler itself or anything else, adds its length): the
 * same trade as Node's HTTP server, which checks its request time-outs on an interval, and
 * undici's timers with their coarse resolution. A clock read costs about 45 ns in Deno
 * (`Date.now()`), a tenth of the in-process path of a message; a timer per tick costs nothing per
 * message.
 *
 * @module
 */

import type { Clock, TimerHandle } from "@fw/runtime";

/**
 * How long after a start its stamp is read, at most (while the event loop is free): the most a
 * time-out of a consumer that records no durations fires late, and the resolution of the
 * duration in its failure log lines.
 */
export const STAMP_TICK_MS = 10;

/**
 * The shortest handler `timeout` stamped per tick: with a shorter one the tick would be more than
 * 1% of it, and the consumer reads the clock at each start instead.
 */
export const STAMPED_TIMEOUT_MIN_MS = 100 * STAMP_TICK_MS;

/** Takes the clock time read after the caller's unstamped invocations started. */
export type TakeStamp = (now: number) => void;

/** The stamps of one clock: one timer per tick, for all consumers on that clock. */
export class StartStamps {
  readonly #clock: Clock;
  #waiting: TakeStamp[] = [];
  #timer: TimerHandle | undefined;

  /**
   * Creates the stamps of `clock` (use {@linkcode startStampsOf} to share them).
   *
   * @param clock The clock read and whose timer runs the tick.
   */
  constructor(clock: Clock) {
    this.#clock = clock;
  }

  /** Consumers waiting for the next stamp. */
  get waiting(): number {
    return this.#waiting.length;
  }

  /**
   * Asks for one stamp at the next tick (call once until it arrives).
   *
   * @param take Takes it.
   */
  request(take: TakeStamp): void {
    this.#waiting.push(take);
    if (this.#timer === undefined) this.#timer = this.#clock.setTimeout(this.#tick, STAMP_TICK_MS);
  }

  /**
   * Withdraws a request (a consumer that stops); the timer stops when no one waits.
   *
   * @param take What was given to `request()`.
   */
  withdraw(take: TakeStamp): void {
    const i = this.#waiting.indexOf(take);
    if (i >= 0) this.#waiting.splice(i, 1);
    if (this.#waiting.length === 0 && this.#timer !== undefined) {
      this.#clock.clearTimeout(this.#timer);
      this.#timer = undefined;
    }
  }

  #tick = (): void => {
    this.#timer = undefined;
    const now = this.#clock.now();
    const waiting = this.#waiting;
    this.#waiting = [];
    for (let i = 0; i < waiting.length; i++) waiting[i](now);
  };
}

const byClock = new WeakMap<Clock, StartStamps>();

/**
 * The stamps shared by every consumer on `clock`.
 *
 * @param clock The clock.
 * @returns Its stamps, made on first use.
 */
export function startStampsOf(clock: Clock): StartStamps {
  let stamps = byClock.get(clock);
  if (stamps === undefined) byClock.set(clock, stamps = new StartStamps(clock));
  return stamps;
}
