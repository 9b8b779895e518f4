/**
 * The cluster example's data: orders and the record of handled events, in one PostgreSQL schema
 * (the SQL transport keeps its own tables in the same schema). The only module of the example and
 * its scripts that imports the PostgreSQL client.
 *
 * @module
 */

import postgres from "postgres";

/** A PostgreSQL client (postgres.js) whose `search_path` is the example's schema. */
export type Db = postgres.Sql;

/**
 * Opens a client on `url` with `schema` first on the search path.
 *
 * @param url A `postgres://` URL.
 * @param schema The schema that holds the example's tables.
 * @param max Pool size.
 * @returns The client; close it with `end()`.
 */
export function openDb(url: string, schema: string, max = 5): Db {
  if (!/^[a-z_][a-z0-9_]{0,47}$/.test(schema)) {
    throw new TypeError(`Invalid schema "${schema}": expected a lower-case identifier`);
  }
  return postgres(url, {
    max,
    onnotice: () => {},
    connection: { search_path: schema, application_name: `fw-cluster-${schema}` },
  });
}

/**
 * Creates the schema and the example's tables (run once, before the instances start).
 *
 * @param db A client from {@linkcode openDb}.
 * @param schema The schema.
 */
export async function migrate(db: Db, schema: string): Promise<void> {
  await db.unsafe(`CREATE SCHEMA IF NOT EXISTS "${schema}"`);
  await db.unsafe(`
    CREATE TABLE IF NOT EXISTS "${schema}".orders (
      id uuid PRIMARY KEY, qty int NOT NULL, instance text NOT NULL,
      created_at timestamptz NOT NULL DEFAULT now());
    CREATE TABLE IF NOT EXISTS "${schema}".handled (
      order_id uuid NOT NULL, instance text NOT NULL, attempt int NOT NULL,
      at timestamptz NOT NULL DEFAULT now())`);
}
