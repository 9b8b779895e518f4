/**
 * Internal to the SQL transport: the wake-up `NOTIFY`s of a publishing process.
 *
 * A `NOTIFY` inside the publishing transaction would make PostgreSQL serialise those commits (a
 * notifying commit holds a database-wide lock while it flushes), which caps publishing at the
 * disk's flush rate. So a plain publish commits its rows without one, and this notifier sends the
 * wake-ups afterwards, in their own statement, which writes nothing and so commits without a
 * flush: at most one is in flight per transport, and it names every topic published since the
 * previous one. Each committed row is therefore followed by at least one wake-up sent after its
 * commit. (A publish inside the caller's transaction sends its `NOTIFY` in that transaction
 * instead, so the wake-up comes exactly when the caller commits.)
 *
 * @module
 */

import type { Logger } from "@fw/runtime";
import type { SqlQueryable } from "../../_postgres.ts";

/** Coalesces wake-ups per transport. */
export class WakeNotifier {
  readonly #sql: SqlQueryable;
  readonly #channel: string;
  readonly #logger?: Logger;
  #pending = new Set<string>();
  #sending = false;

  /**
   * @param sql The client.
   * @param channel The channel.
   * @param logger Logs failed wake-ups (consumers still find the rows by polling).
   */
  constructor(sql: SqlQueryable, channel: string, logger?: Logger) {
    this.#sql = sql;
    this.#channel = channel;
    this.#logger = logger;
  }

  /** Asks for a wake-up of `topic`'s consumers (`""`: every consumer). */
  wake(topic: string): void {
    this.#pending.add(topic);
    if (this.#sending) return;
    this.#sending = true;
    void this.#send();
  }

  async #send(): Promise<void> {
    while (this.#pending.size > 0) {
      const topics = [...this.#pending];
      this.#pending = new Set();
      try {
        await this.#sql.unsafe(
          "SELECT pg_notify($1, t) FROM unnest($2::text[]) AS t",
          [this.#channel, topics],
          { prepare: true },
        );
      } catch (error) {
        this.#logger?.warn("sql transport: a wake-up NOTIFY failed; consumers will poll", {
          error,
        });
      }
    }
    this.#sending = false;
  }

  /** Resolves when no wake-up is being sent. */
  async drain(): Promise<void> {
    while (this.#sending) await new Promise((r) => setTimeout(r, 2));
  }
}
