/**
 * Internal to the SQL transport: its connections. The main pool (publishing, registry writes) opens
 * on first use and runs the migration unless `migrate: false`; with `url`, claim loops get a small
 * pool of their own, so a burst of publishes cannot hold back claims and acks (and make claims
 * expire). A client passed in serves both and is never closed.
 *
 * @module
 */

import { openSql, type SqlConnection, type SqlQueryable } from "../../_postgres.ts";
import type { ResolvedSqlOptions } from "./_options.ts";
import { migrationSql } from "./_schema.ts";

const OWNER = "sqlTransport()";

/** The lazily opened connections of one transport. */
export class SqlConnections {
  readonly #o: ResolvedSqlOptions;
  #main: Promise<SqlConnection> | undefined;
  #consumer: Promise<SqlConnection> | undefined;
  #closed = false;

  constructor(options: ResolvedSqlOptions) {
    this.#o = options;
  }

  /** Whether {@linkcode SqlConnections.close} ran. */
  get closed(): boolean {
    return this.#closed;
  }

  /** Whether the main pool was ever asked for. */
  get opened(): boolean {
    return this.#main !== undefined;
  }

  /** The main pool (migrated unless `migrate: false`). */
  main(): Promise<SqlConnection> {
    if (this.#closed) return Promise.reject(new Error(`${OWNER} is closed`));
    return this.#main ??= (async () => {
      const o = this.#o;
      const conn = await openSql(OWNER, o.source, {
        max: o.poolSize,
        applicationName: o.applicationName,
      });
      if (o.migrate) {
        try {
          await this.#migrateOn(conn.sql);
        } catch (err) {
          await conn.close();
          throw err;
        }
      }
      return conn;
    })().catch((err) => {
      this.#main = undefined;
      throw err;
    });
  }

  /** The claim loops' pool (the main one when a client was given). */
  consumer(): Promise<SqlConnection> {
    if (this.#o.source.client) return this.main();
    return this.#consumer ??= this.main().then(() =>
      openSql(OWNER, this.#o.source, {
        max: this.#o.consumerPoolSize,
        applicationName: this.#o.applicationName,
      })
    ).catch((err) => {
      this.#consumer = undefined;
      throw err;
    });
  }

  /** Runs the migration (again, when it ran on open: it is idempotent). */
  async migrate(): Promise<void> {
    const conn = await this.main();
    if (!this.#o.migrate) await this.#migrateOn(conn.sql);
  }

  async #migrateOn(sql: SqlQueryable): Promise<void> {
    try {
      await sql.unsafe(migrationSql(this.#o.schema));
    } catch (err) {
      throw new Error(
        `${OWNER} cannot create its tables in schema "${this.#o.schema}": ${
          (err as Error).message
        }`,
        { cause: err },
      );
    }
  }

  /** Marks them closed; resolves to what was opened (for the last writes before closing). */
  async shut(): Promise<{ main?: SqlConnection; consumer?: SqlConnection }> {
    this.#closed = true;
    return {
      main: await this.#main?.catch(() => undefined),
      consumer: await this.#consumer?.catch(() => undefined),
    };
  }
}
