/**
 * Internal to the Deno KV transport: the schedule state. One key per schedule,
 * `[prefix, "schedules", name]`, holding the record. Every write is an atomic operation that
 * checks the versionstamp read (`null`: the key must not exist yet), so exactly one instance
 * moves a schedule's `tick` forward and runs that tick.
 *
 * @module
 */

import {
  parseScheduleRecord,
  type ScheduleRecord,
  type ScheduleStore,
  type StoredSchedule,
} from "../../schedule/store.ts";
import { retryLocked } from "./_registry.ts";

/** Schedule state in Deno KV. */
export class DenoKvScheduleStore implements ScheduleStore {
  readonly #kv: () => Promise<Deno.Kv>;
  readonly #prefix: string;

  /**
   * @param kv The transport's database (opened on first use).
   * @param prefix The transport's key prefix.
   */
  constructor(kv: () => Promise<Deno.Kv>, prefix: string) {
    this.#kv = kv;
    this.#prefix = prefix;
  }

  async read(name: string): Promise<StoredSchedule | undefined> {
    const kv = await this.#kv();
    const entry = await retryLocked(() => kv.get<string>([this.#prefix, "schedules", name]));
    if (entry.versionstamp === null) return undefined;
    const record = parseScheduleRecord(String(entry.value)) ?? { since: Date.now(), runs: [] };
    return { record, version: entry.versionstamp };
  }

  async write(
    name: string,
    record: ScheduleRecord,
    version: string | undefined,
  ): Promise<boolean> {
    const kv = await this.#kv();
    const key = [this.#prefix, "schedules", name];
    const result = await retryLocked(() =>
      kv.atomic().check({ key, versionstamp: version ?? null }).set(key, JSON.stringify(record))
        .commit()
    );
    return result.ok;
  }
}
