/**
 * Cron expressions: the one module of `@fw/events` that imports npm `croner`. An expression has 5
 * fields (minute hour day-of-month month day-of-week) or 6 with seconds first; croner's nicknames
 * (`@daily`, `@hourly`, ...) are accepted too. Times are read in an IANA time zone (UTC by
 * default), so daylight-saving changes follow that zone's rules. `schedule()` checks the shape
 * of an expression when it is defined; the scheduler imports this module (and croner) at
 * start-up, so importing `@fw/events` loads no npm package.
 *
 * @module
 */

import { Cron } from "croner";

/** A compiled cron expression in one time zone. */
export interface CronTicks {
  /** The expression as given. */
  readonly expression: string;
  /** The IANA time zone. */
  readonly timezone: string;
  /** The first tick strictly after `after` (ms since the epoch), if there is one. */
  next(after: number): number | undefined;
  /** The latest tick at or before `atOrBefore` and strictly after `after`, if there is one. */
  latest(after: number, atOrBefore: number): number | undefined;
}

/**
 * Compiles a cron expression.
 *
 * @param expression 5 fields, or 6 with seconds first.
 * @param timezone An IANA time zone name (checked when the schedule was defined).
 * @returns The compiled ticks.
 * @throws {TypeError} With croner's reason when the expression is invalid.
 */
export function compileCron(expression: string, timezone: string): CronTicks {
  let cron: Cron;
  try {
    cron = new Cron(expression, { timezone, mode: "5-or-6-parts", paused: true });
  } catch (err) {
    const reason = (err instanceof Error ? err.message : String(err)).replace(/^CronPattern: /, "");
    throw new TypeError(reason);
  }
  if (cron.nextRun(new Date(0)) === null) {
    throw new TypeError(`the expression "${expression}" never matches a date`);
  }
  return {
    expression,
    timezone,
    next(after: number): number | undefined {
      return cron.nextRun(new Date(after))?.getTime();
    },
    latest(after: number, atOrBefore: number): number | undefined {
      if (atOrBefore <= after) return undefined;
      const [prev] = cron.previousRuns(1, new Date(atOrBefore + 1));
      const at = prev?.getTime();
      return at !== undefined && at > after && at <= atOrBefore ? at : undefined;
    },
  };
}
