/**
 * The Schedules view fed by the application's own scheduler (the `events()` plugin's, found
 * through `schedulerOf()`): each schedule's {@linkcode ScheduleStatus} (its shared record read
 * from its engine, its next tick, this instance's last error) as a {@linkcode ScheduleView}.
 * Internal.
 *
 * @module
 */

import { schedulerOf, type ScheduleStatus } from "@fw/events";
import type { ScheduleSource, ScheduleView } from "./schedules.ts";

const iso = (ms: number) => new Date(ms).toISOString();

/**
 * One schedule's status as the view shows it: the last finished run's tick, outcome, attempts
 * and duration (from its tick to the end of its last attempt, retries included); runs in
 * progress on any instance; the error when the last run failed on this instance.
 *
 * @param s The scheduler's status of the schedule.
 * @returns The row.
 */
export function scheduleViewOf(s: ScheduleStatus): ScheduleView {
  const last = s.record?.last;
  const error = last?.outcome === "failed" && s.lastError?.tick === last.tick
    ? s.lastError.message
    : undefined;
  return {
    name: s.name,
    every: s.timezone === "UTC" ? s.cron : `${s.cron} (${s.timezone})`,
    ...(s.next !== undefined ? { next: iso(s.next) } : {}),
    ...(last
      ? {
        lastRun: iso(last.tick),
        outcome: last.outcome,
        attempts: last.attempts,
        durationMs: Math.max(0, last.at - last.tick),
      }
      : {}),
    ...(error !== undefined ? { error } : {}),
    running: s.record?.runs.length ?? s.runningHere,
  };
}

/**
 * The schedules of the application that owns `container`, or `undefined` while it has no
 * running scheduler.
 *
 * @param container The application's DI container.
 * @returns A source that reads the scheduler on each call.
 */
export function appSchedules(container: object): ScheduleSource & { available(): boolean } {
  return {
    available: () => schedulerOf(container) !== undefined,
    async schedules() {
      const scheduler = schedulerOf(container);
      return scheduler ? (await scheduler.status()).map(scheduleViewOf) : [];
    },
  };
}
