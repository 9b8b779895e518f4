/**
 * Internal to the SQL transport: the schedule state. One row per schedule in
 * `<schema>.schedules` (name, the record as JSON text, a version number). The first write is an
 * `INSERT ... ON CONFLICT DO NOTHING` (one instance creates the row); later ones are an `UPDATE`
 * guarded by the version read, so exactly one instance moves a schedule's `tick` forward and runs
 * that tick. The table is created on first use, under an advisory lock, beside the transport's
 * own tables.
 *
 * @module
 */

import type { SqlQueryable } from "../../_postgres.ts";
import {
  parseScheduleRecord,
  type ScheduleRecord,
  type ScheduleStore,
  type StoredSchedule,
} from "../../schedule/store.ts";

/** Schedule state in PostgreSQL. */
export class SqlScheduleStore implements ScheduleStore {
  readonly #sql: () => Promise<SqlQueryable>;
  readonly #schema: string;
  readonly #table: string;
  #ready: Promise<SqlQueryable> | undefined;

  /**
   * @param sql The transport's main pool (opened and migrated on first use).
   * @param schema The quoted schema name.
   */
  constructor(sql: () => Promise<SqlQueryable>, schema: string) {
    this.#sql = sql;
    this.#schema = schema;
    this.#table = `${schema}.schedules`;
  }

  #open(): Promise<SqlQueryable> {
    return this.#ready ??= (async () => {
      const sql = await this.#sql();
      // One simple-protocol script runs as one transaction: the lock serialises concurrent starts.
      await sql.unsafe(
        `SELECT pg_advisory_xact_lock(hashtext('fw.events.schedules'));
         CREATE SCHEMA IF NOT EXISTS ${this.#schema};
         CREATE TABLE IF NOT EXISTS ${this.#table} (
           name text PRIMARY KEY,
           record text NOT NULL,
           version bigint NOT NULL
         );`,
      );
      return sql;
    })().catch((err) => {
      this.#ready = undefined;
      throw err;
    });
  }

  async read(name: string): Promise<StoredSchedule | undefined> {
    const sql = await this.#open();
    const [row] = await sql.unsafe(
      `SELECT record, version::text AS version FROM ${this.#table} WHERE name = $1`,
      [name],
    );
    if (!row) return undefined;
    const record = parseScheduleRecord(String(row.record)) ?? { since: Date.now(), runs: [] };
    return { record, version: String(row.version) };
  }

  async write(
    name: string,
    record: ScheduleRecord,
    version: string | undefined,
  ): Promise<boolean> {
    const sql = await this.#open();
    const json = JSON.stringify(record);
    const rows = version === undefined
      ? await sql.unsafe(
        `INSERT INTO ${this.#table} (name, record, version) VALUES ($1, $2, 1)
         ON CONFLICT (name) DO NOTHING RETURNING version`,
        [name, json],
      )
      : await sql.unsafe(
        `UPDATE ${this.#table} SET record = $2, version = version + 1
         WHERE name = $1 AND version = $3::bigint RETURNING version`,
        [name, json, version],
      );
    return rows.length === 1;
  }
}
