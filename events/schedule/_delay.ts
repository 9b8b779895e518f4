/**
 * Internal to `@fw/events`: the `delay` and `deliverAt` publish options. The publisher turns them
 * into one due time (ms since the epoch) and checks it, before anything is stored, against the
 * furthest ahead the topic's transport can hold ({@linkcode TransportCapabilities.maxDelay}).
 *
 * @module
 */

import type { TransportCapabilities } from "../transport.ts";

/** The option a due time came from, for error messages. */
export type DelayOption = "delay" | "deliverAt";

/** A checked due time. */
export interface DueTime {
  /** Due time in ms since the epoch (later than `now`). */
  readonly deliverAt: number;
  /** The option it came from. */
  readonly option: DelayOption;
}

function invalid(topic: string, option: DelayOption, expected: string, got: unknown): TypeError {
  const shown = got instanceof Date ? "an invalid Date" : `"${String(got)}"`;
  return new TypeError(
    `Invalid publish option "${option}" for topic "${topic}": expected ${expected}, got ${shown}`,
  );
}

/**
 * Reads `delay` (ms from now) and `deliverAt` (a `Date` or ms since the epoch).
 *
 * @param topic Topic name, for messages.
 * @param delay The `delay` option.
 * @param deliverAt The `deliverAt` option.
 * @param now The publisher's clock.
 * @returns The due time, or `undefined` when neither is set or the time is not in the future
 *   (`delay: 0`, a `deliverAt` already past): the message is published at once.
 * @throws {TypeError} Naming the option: negative, not a finite number, an invalid `Date`, or
 *   both options set.
 */
export function dueTime(
  topic: string,
  delay: unknown,
  deliverAt: unknown,
  now: number,
): DueTime | undefined {
  if (delay !== undefined && deliverAt !== undefined) {
    throw new TypeError(
      `Invalid publish options "delay" and "deliverAt" for topic "${topic}": set at most one of them`,
    );
  }
  if (delay !== undefined) {
    if (typeof delay !== "number" || !Number.isFinite(delay) || delay < 0) {
      throw invalid(topic, "delay", "a finite number of milliseconds >= 0", delay);
    }
    return delay > 0 ? { deliverAt: now + delay, option: "delay" } : undefined;
  }
  if (deliverAt === undefined) return undefined;
  const at = deliverAt instanceof Date ? deliverAt.getTime() : deliverAt;
  if (typeof at !== "number" || !Number.isFinite(at) || at < 0) {
    throw invalid(topic, "deliverAt", "a valid Date or milliseconds since the epoch", deliverAt);
  }
  return at > now ? { deliverAt: at, option: "deliverAt" } : undefined;
}

/**
 * Checks a due time against what the transport can hold.
 *
 * @param topic Topic name.
 * @param due The due time.
 * @param now The publisher's clock.
 * @param transport The transport's key in the bus.
 * @param capabilities Its capabilities.
 * @throws {TypeError} Naming the option, when the transport cannot delay messages or not that far.
 */
export function checkMaxDelay(
  topic: string,
  due: DueTime,
  now: number,
  transport: string,
  capabilities: TransportCapabilities,
): void {
  const max = capabilities.maxDelay;
  if (max === undefined) {
    throw new TypeError(
      `Invalid publish option "${due.option}" for topic "${topic}": transport "${transport}" cannot delay messages`,
    );
  }
  if (due.deliverAt - now > max) {
    throw new TypeError(
      `Invalid publish option "${due.option}" for topic "${topic}": transport "${transport}" holds messages at most ${max} ms ahead, got ${
        due.deliverAt - now
      } ms`,
    );
  }
}
