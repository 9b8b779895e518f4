/**
 * Internal: the clock time a publish just read, handed to the first delivery it starts in the
 * same synchronous call (the memory broker delivers inside `publish`), so that delivery does not
 * read the clock again for its start time. A clock read costs 55-90 ns, a large part of an
 * in-process message.
 *
 * The time is offered only for the clock it was read from and taken at most once: a second
 * delivery of the same publish (another group, or one started after a synchronous handler ran)
 * reads the clock itself, so no start time is older than the code between the read and the
 * delivery of the publish itself.
 *
 * @module
 */

import type { Clock } from "@fw/runtime";

let offeredClock: Clock | undefined;
let offeredAt = 0;

/**
 * Offers `at`, just read from `clock`, to the first delivery started before
 * {@linkcode withdrawPublishTime} (call it in a `finally` after the synchronous start of the
 * publish).
 *
 * @param clock The clock `at` was read from.
 * @param at The time read.
 */
export function offerPublishTime(clock: Clock, at: number): void {
  offeredClock = clock;
  offeredAt = at;
}

/** Ends the offer of {@linkcode offerPublishTime}. */
export function withdrawPublishTime(): void {
  offeredClock = undefined;
}

/**
 * The time on offer from `clock` (taken: the next call reads the clock), else `clock.now()`.
 *
 * @param clock The clock of the caller.
 * @returns The current time on that clock.
 */
export function startTime(clock: Clock): number {
  if (offeredClock === clock) {
    offeredClock = undefined;
    return offeredAt;
  }
  return clock.now();
}
