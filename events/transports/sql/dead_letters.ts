/**
 * The dead letters the SQL transport keeps when nothing subscribes to `<topic>.dlq`: rows of the
 * `dead_letters` table in the transport's schema, so they survive restarts and every process on the
 * database sees the same list. Bounded per original topic: over the limit
 * the oldest of that topic are evicted, and every eviction is logged and counted.
 *
 * @module
 */

import { type Logger, type Meter, noopMeter } from "@fw/runtime";
import type { Envelope } from "../../envelope.ts";
import type { DeadLetter, DeadLetterStore } from "../../transport.ts";
import type { SqlQueryable } from "../../_postgres.ts";
import type { SqlNames } from "./_schema.ts";

/** Options of {@linkcode SqlDeadLetters}. */
export interface SqlDeadLettersOptions {
  /** Waits for the connection (and the migration) and returns the client. */
  sql: () => Promise<SqlQueryable>;
  /** The transport's table names. */
  names: SqlNames;
  /** Maximum kept per original topic. */
  limit: number;
  /** Logs evictions. */
  logger?: Logger;
  /** Counts evictions as `events.dlq.evicted`. */
  meter?: Meter;
}

interface Row {
  envelope: Envelope;
  dead_at: Date;
}

const toDeadLetter = (r: Row): DeadLetter => ({
  envelope: r.envelope,
  deadAt: new Date(r.dead_at).getTime(),
});

/**
 * A bounded, persistent dead-letter store in PostgreSQL, shared by every process on the database.
 * Created by the SQL transport (`transport.deadLetters`).
 */
export class SqlDeadLetters implements DeadLetterStore {
  readonly #o: SqlDeadLettersOptions;
  readonly #evictions;

  /**
   * Creates the store.
   *
   * @param options Client, table names, limit, logger and meter.
   */
  constructor(options: SqlDeadLettersOptions) {
    this.#o = options;
    this.#evictions = (options.meter ?? noopMeter).counter("events.dlq.evicted", {
      description: "Dead letters evicted from a full buffer",
    });
  }

  /**
   * Keeps one dead letter, evicting the oldest of its original topic while over the limit.
   *
   * @param envelope The `<topic>.dlq` envelope.
   */
  async add(envelope: Envelope): Promise<void> {
    const sql = await this.#o.sql();
    const t = this.#o.names.deadLetters;
    const original = envelope.attributes?.["dlq.original_topic"] ?? envelope.topic;
    await sql.unsafe(
      `INSERT INTO ${t} (topic, original_topic, message_id, envelope)
VALUES ($1, $2, $3, $4::text::json)`,
      [envelope.topic, original, envelope.id, JSON.stringify(envelope)],
      { prepare: true },
    );
    // A second statement sees every committed insert, so concurrent adds cannot overfill.
    const evicted = await sql.unsafe(
      `DELETE FROM ${t} WHERE original_topic = $1 AND id IN (
  SELECT id FROM ${t} WHERE original_topic = $1 ORDER BY id DESC OFFSET $2
)
RETURNING message_id, envelope`,
      [original, this.#o.limit],
      { prepare: true },
    );
    for (const row of evicted) {
      const e = row.envelope as Envelope;
      this.#evictions.add(1);
      this.#o.logger?.warn("dead letter evicted: the buffer is full", {
        traceId: e?.traceId,
        topic: e?.topic,
        messageId: row.message_id,
        limit: this.#o.limit,
      });
    }
  }

  /**
   * Kept dead letters, oldest first, optionally of one topic (original or `.dlq` name).
   *
   * @param options `topic` filter.
   * @returns The dead letters.
   */
  async list(options: { topic?: string } = {}): Promise<DeadLetter[]> {
    const sql = await this.#o.sql();
    const t = this.#o.names.deadLetters;
    const rows = options.topic === undefined
      ? await sql.unsafe(`SELECT envelope, dead_at FROM ${t} ORDER BY id`)
      : await sql.unsafe(
        `SELECT envelope, dead_at FROM ${t} WHERE original_topic = $1 OR topic = $1 ORDER BY id`,
        [options.topic],
      );
    return (rows as unknown as Row[]).map(toDeadLetter);
  }

  /**
   * Removes and returns the dead letters with these envelope ids (each only once, even when two
   * processes take the same ids at the same time).
   *
   * @param ids Envelope ids.
   * @returns The removed dead letters, oldest first.
   */
  async take(ids: readonly string[]): Promise<DeadLetter[]> {
    if (ids.length === 0) return [];
    const sql = await this.#o.sql();
    const rows = await sql.unsafe(
      `DELETE FROM ${this.#o.names.deadLetters} WHERE message_id = ANY($1::text[])
RETURNING id, envelope, dead_at`,
      [[...ids]],
    );
    return (rows as unknown as (Row & { id: string })[])
      .sort((a, b) => Number(BigInt(a.id) - BigInt(b.id)))
      .map(toDeadLetter);
  }
}
