/**
 * What the dashboard's Schedules view reads: any object that lists schedules with their next
 * and last runs. By default the dashboard reads the schedules of the application's `events()`
 * plugin (cron schedules of `@fw/events`); `dashboard({ schedules })` gives another source
 * (custom job runners, tests).
 *
 * @module
 */

/** One schedule as the Schedules view shows it. */
export interface ScheduleView {
  /** The schedule's name. */
  readonly name: string;
  /** Its cron expression or interval, in words. */
  readonly every?: string;
  /** The next run (ISO 8601), when one is due. */
  readonly next?: string;
  /** When the last finished run started (ISO 8601). */
  readonly lastRun?: string;
  /** How the last run ended (`ok`, `failed`, `skipped`...). */
  readonly outcome?: string;
  /** Attempts the last run took. */
  readonly attempts?: number;
  /** How long the last run took, in ms (from its planned time to the end of its last attempt). */
  readonly durationMs?: number;
  /** The last run's error, when it failed. */
  readonly error?: string;
  /** Runs going on now. */
  readonly running?: number;
}

/**
 * A source of schedules for `dashboard({ schedules })`.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import type { ScheduleSource } from "@fw/dashboard";
 * const source: ScheduleSource = {
 *   schedules: () => [{ name: "nightly-report", every: "0 3 * * *", outcome: "ok" }],
 * };
 * assert.equal((await source.schedules())[0].name, "nightly-report");
 * ```
 */
export interface ScheduleSource {
  /** The schedules, in the order to show them. */
  schedules(): readonly ScheduleView[] | Promise<readonly ScheduleView[]>;
}
