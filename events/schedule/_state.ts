/**
 * The schedule state machine, as pure functions from one {@linkcode ScheduleRecord} to the next.
 * The runner reads the record, applies one of these, and writes the result with a
 * compare-and-set; when another instance wrote first, it reads again and reapplies. So every
 * decision (claiming a tick, skipping it, taking over a run, settling one) is made on the latest
 * record and exactly one instance makes it.
 *
 * @module
 */

import type { RunRecord, ScheduleRecord } from "./store.ts";

/** What an instance brings to a {@linkcode step}. */
export interface StepInput {
  /** Clock time. */
  readonly now: number;
  /** This instance's id. */
  readonly instance: string;
  /** A tick to claim, if one is due. */
  readonly tick?: number;
  /** Overlap policy. */
  readonly overlap: "skip" | "allow";
  /** Retries after the first attempt. */
  readonly maxRetries: number;
  /** Lease length (ms). */
  readonly lease: number;
  /** Trace id for a run started now. */
  readonly traceId: string;
  /** Whether this instance is running `run` now (its lease is renewed while it does). */
  readonly running: (run: RunRecord) => boolean;
}

/** What a {@linkcode step} decided. */
export interface StepResult {
  /** The record to write; `undefined` when nothing changed. */
  readonly record: ScheduleRecord | undefined;
  /** Runs this instance starts now (a new tick, a due retry, a take-over). */
  readonly start: readonly RunRecord[];
  /** The tick, when it was skipped because a run is in progress. */
  readonly skipped?: number;
  /** Runs whose instance stopped renewing during their last attempt: they failed for good. */
  readonly abandoned: readonly RunRecord[];
}

/**
 * One look at the record: takes over runs whose lease expired (as their next attempt, or gives
 * them up after the last one), claims retries that are due, then claims `tick` (run it, or skip
 * it while a run is in progress and `overlap` is `skip`).
 *
 * @param current The stored record, if any.
 * @param input Time, instance, tick and policy.
 * @returns The new record and what this instance must do.
 */
export function step(current: ScheduleRecord | undefined, input: StepInput): StepResult {
  const { now, instance, lease } = input;
  let changed = current === undefined;
  const base: ScheduleRecord = current ?? { since: now, runs: [] };
  const runs: RunRecord[] = [];
  const start: RunRecord[] = [];
  const abandoned: RunRecord[] = [];
  for (const run of base.runs) {
    if (run.until > now || (run.owner === instance && input.running(run))) {
      // Running elsewhere with a live lease, waiting for a later retry, or running here.
      runs.push(run);
      continue;
    }
    changed = true;
    if (run.owner !== undefined && run.attempt > input.maxRetries) {
      abandoned.push(run);
      continue;
    }
    const mine: RunRecord = {
      ...run,
      attempt: run.attempt + 1,
      owner: instance,
      until: now + lease,
    };
    runs.push(mine);
    start.push(mine);
  }
  let tick = base.tick;
  let skipped: number | undefined;
  if (input.tick !== undefined && (tick === undefined || input.tick > tick)) {
    changed = true;
    tick = input.tick;
    if (input.overlap === "skip" && runs.length > 0) skipped = input.tick;
    else {
      const run: RunRecord = {
        tick: input.tick,
        attempt: 1,
        traceId: input.traceId,
        owner: instance,
        until: now + lease,
      };
      runs.push(run);
      start.push(run);
    }
  }
  let last = base.last;
  for (const run of abandoned) {
    if (last === undefined || run.tick >= last.tick) {
      last = { tick: run.tick, outcome: "failed", attempts: run.attempt, at: now };
    }
  }
  if (!changed) return { record: undefined, start, abandoned };
  const record: ScheduleRecord = {
    since: base.since,
    ...(tick !== undefined ? { tick } : {}),
    runs,
    ...(last ? { last } : {}),
  };
  return { record, start, abandoned, ...(skipped !== undefined ? { skipped } : {}) };
}

/**
 * Whether `run` is still this instance's in `record` (same tick and attempt, owned by it).
 *
 * @param record The stored record.
 * @param run The run as this instance started it.
 * @param instance This instance's id.
 * @returns The index of the run, or -1 when the run was lost (taken over or given up).
 */
export function ownRun(
  record: ScheduleRecord | undefined,
  run: RunRecord,
  instance: string,
): number {
  if (!record) return -1;
  return record.runs.findIndex((r) =>
    r.tick === run.tick && r.attempt === run.attempt && r.owner === instance
  );
}

/**
 * Extends the lease of this instance's run.
 *
 * @param record The stored record.
 * @param run The run.
 * @param instance This instance's id.
 * @param until The new lease expiry.
 * @returns The new record, or `undefined` when the run is no longer this instance's.
 */
export function renew(
  record: ScheduleRecord | undefined,
  run: RunRecord,
  instance: string,
  until: number,
): ScheduleRecord | undefined {
  const i = ownRun(record, run, instance);
  if (i < 0) return undefined;
  const runs = [...record!.runs];
  runs[i] = { ...runs[i], until };
  return { ...record!, runs };
}

/** How an attempt ended, for {@linkcode settle}. */
export type AttemptOutcome =
  | { readonly ok: true }
  | { readonly ok: false; readonly retryAt?: number };

/**
 * Records the end of this instance's attempt: success or a final failure removes the run and
 * updates `last`; a failure with `retryAt` leaves it waiting for its retry (no owner).
 *
 * @param record The stored record.
 * @param run The run.
 * @param instance This instance's id.
 * @param outcome Success, or failure with the retry time when retries remain.
 * @param now Clock time.
 * @returns The new record, or `undefined` when the run is no longer this instance's.
 */
export function settle(
  record: ScheduleRecord | undefined,
  run: RunRecord,
  instance: string,
  outcome: AttemptOutcome,
  now: number,
): ScheduleRecord | undefined {
  const i = ownRun(record, run, instance);
  if (i < 0) return undefined;
  const runs = [...record!.runs];
  if (!outcome.ok && outcome.retryAt !== undefined) {
    const { owner: _owner, ...waiting } = runs[i];
    runs[i] = { ...waiting, until: outcome.retryAt };
    return { ...record!, runs };
  }
  runs.splice(i, 1);
  const previous = record!.last;
  const last = previous !== undefined && previous.tick > run.tick ? previous : {
    tick: run.tick,
    outcome: outcome.ok ? "ok" as const : "failed" as const,
    attempts: run.attempt,
    at: now,
  };
  return { ...record!, runs, last };
}
