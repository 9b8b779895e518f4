/**
 * Where schedules keep their shared state: one record per schedule, written with a
 * compare-and-set. Every instance of an application reads and writes the same record through its
 * transport's engine, which is how a tick runs once across instances: a tick is claimed by the
 * write that moves the record's `tick` forward, and only one write from a given version succeeds.
 *
 * Each transport that can run schedules gives a store through `Transport.scheduleStore()`:
 * the memory broker an in-process {@linkcode MemoryScheduleStore}, Redis a key per schedule
 * changed by a script, PostgreSQL a row per schedule with a version column, Deno KV an atomic
 * check of the versionstamp, NATS a key of a JetStream key-value bucket created or updated at a
 * revision.
 *
 * @module
 */

/** One run of a tick: running on an instance, or waiting for its retry. */
export interface RunRecord {
  /** The tick it runs (the scheduled time, ms since the epoch). */
  readonly tick: number;
  /** The attempt running now, or the last attempt (failed) while it waits for its retry. */
  readonly attempt: number;
  /** Trace id shared by every attempt of the run. */
  readonly traceId: string;
  /** The instance running it; absent while it waits for its retry. */
  readonly owner?: string;
  /** Lease expiry while running (the owner renews it), else when the retry is due (ms). */
  readonly until: number;
}

/** How the last finished run ended. */
export interface LastRun {
  /** Its tick. */
  readonly tick: number;
  /** `ok`, or `failed` after its last attempt. */
  readonly outcome: "ok" | "failed";
  /** Attempts it took. */
  readonly attempts: number;
  /** When it finished (ms). */
  readonly at: number;
}

/** The shared state of one schedule. */
export interface ScheduleRecord {
  /** When the schedule was first seen (ms): catch-up never reaches before it. */
  readonly since: number;
  /** The latest tick claimed (run or skipped). */
  readonly tick?: number;
  /** Runs not finished yet (one at most with `overlap: "skip"`). */
  readonly runs: readonly RunRecord[];
  /** The last run that finished. */
  readonly last?: LastRun;
}

/** A record with the version a compare-and-set needs. */
export interface StoredSchedule {
  /** The record. */
  readonly record: ScheduleRecord;
  /** Opaque version token of the stored record. */
  readonly version: string;
}

/** The schedule state a transport keeps in its engine. */
export interface ScheduleStore {
  /**
   * Reads the record of a schedule.
   *
   * @param name Schedule name.
   * @returns The record and its version, or `undefined` when there is none.
   */
  read(name: string): Promise<StoredSchedule | undefined>;
  /**
   * Writes a record if the stored version is still `version` (`undefined`: only if none is
   * stored).
   *
   * @param name Schedule name.
   * @param record The new record.
   * @param version The version it was derived from.
   * @returns Whether it was written (false: someone else wrote first; read again).
   */
  write(name: string, record: ScheduleRecord, version: string | undefined): Promise<boolean>;
}

/**
 * Parses a stored record (JSON), or returns `undefined` when it is not one.
 *
 * @param text The stored text.
 * @returns The record.
 */
export function parseScheduleRecord(text: string): ScheduleRecord | undefined {
  try {
    const value = JSON.parse(text) as ScheduleRecord;
    if (typeof value?.since === "number" && Array.isArray(value.runs)) return value;
  } catch {
    // Not JSON: treated as absent and overwritten by the next claim.
  }
  return undefined;
}

/**
 * Schedule state kept in the process: every bus on the same memory broker shares it, so a tick
 * runs once among them.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { MemoryScheduleStore } from "@fw/events";
 * const store = new MemoryScheduleStore();
 * assert.equal(await store.write("nightly", { since: 0, runs: [] }, undefined), true);
 * const stored = await store.read("nightly");
 * assert.equal(await store.write("nightly", { since: 0, tick: 1000, runs: [] }, undefined), false);
 * assert.equal(await store.write("nightly", { since: 0, tick: 1000, runs: [] }, stored!.version), true);
 * ```
 */
export class MemoryScheduleStore implements ScheduleStore {
  readonly #records = new Map<string, StoredSchedule>();
  #versions = 0;

  /** Reads a record (a copy). */
  read(name: string): Promise<StoredSchedule | undefined> {
    const stored = this.#records.get(name);
    return Promise.resolve(
      stored && { record: structuredClone(stored.record), version: stored.version },
    );
  }

  /** Writes a record when its version matches. */
  write(name: string, record: ScheduleRecord, version: string | undefined): Promise<boolean> {
    if (this.#records.get(name)?.version !== version) return Promise.resolve(false);
    this.#records.set(name, { record: structuredClone(record), version: String(++this.#versions) });
    return Promise.resolve(true);
  }
}
