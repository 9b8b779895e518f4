/**
 * Internal to the SQL transport: plain publishes (no `tx`, `dedupeKey` or `deliverAt`) of one
 * transport, coalesced when the pool is busy.
 *
 * Each plain publish is one statement and one commit. While fewer than `limit` of them are in
 * flight, a publish is sent at once, alone (the latency of a lone publish is unchanged). Publishes
 * that come while `limit` are in flight wait, and the next statement to finish sends every one
 * waiting by then as a single multi-row statement (`publishMany`): one round trip and one commit
 * for all of them, instead of one each. A publish still resolves only after the commit that holds
 * its rows, and rejects when that statement fails. A multi-row statement the server refuses
 * (which wrote nothing) is tried again one publish per statement, so each caller gets its own
 * outcome and a bad publish does not fail the others; when the connection fails instead (the
 * statement may have committed), each publish of it fails, as a lone one would.
 *
 * @module
 */

import type { SqlQueryable } from "../../_postgres.ts";
import type { SqlQueries } from "./_queries.ts";

/** Most publishes sent in one multi-row statement. */
const MAX_BATCH = 200;

interface Waiting {
  topic: string;
  body: string;
  resolve: (inserted: boolean) => void;
  reject: (error: unknown) => void;
}

/** Sends plain publishes, coalescing the ones that wait for a free connection. */
export class PublishBatcher {
  readonly #sql: SqlQueryable;
  readonly #queries: SqlQueries;
  readonly #limit: number;
  #waiting: Waiting[] = [];
  #inflight = 0;
  /** Callers of {@linkcode drain} waiting for the last statement to finish. */
  #idle: (() => void)[] = [];

  /**
   * @param sql The publishing pool.
   * @param queries The statements.
   * @param limit Statements in flight before publishes wait (the pool size).
   */
  constructor(sql: SqlQueryable, queries: SqlQueries, limit: number) {
    this.#sql = sql;
    this.#queries = queries;
    this.#limit = Math.max(1, limit);
  }

  /**
   * Inserts the rows of one publish.
   *
   * @returns Whether at least one row was inserted (the topic has a group).
   */
  publish(topic: string, body: string): Promise<boolean> {
    if (this.#inflight < this.#limit) {
      this.#inflight++;
      return this.#one(topic, body).finally(() => this.#next());
    }
    return new Promise((resolve, reject) => {
      this.#waiting.push({ topic, body, resolve, reject });
    });
  }

  async #one(topic: string, body: string): Promise<boolean> {
    const rows = await this.#sql.unsafe(this.#queries.publish, [topic, body], { prepare: true });
    return rows.length > 0;
  }

  /** A statement finished: sends what waits, as one statement. */
  #next(): void {
    this.#inflight--;
    if (this.#waiting.length === 0) {
      if (this.#inflight === 0) { for (const wake of this.#idle.splice(0)) wake(); }
      return;
    }
    let batch: Waiting[];
    if (this.#waiting.length <= MAX_BATCH) {
      batch = this.#waiting;
      this.#waiting = [];
    } else {
      batch = this.#waiting.splice(0, MAX_BATCH);
    }
    this.#inflight++;
    void this.#many(batch).finally(() => this.#next());
  }

  async #many(batch: Waiting[]): Promise<void> {
    if (batch.length === 1) {
      const w = batch[0];
      await this.#one(w.topic, w.body).then(w.resolve, w.reject);
      return;
    }
    const topics = new Array<string>(batch.length);
    const bodies = new Array<string>(batch.length);
    for (let i = 0; i < batch.length; i++) {
      topics[i] = batch[i].topic;
      bodies[i] = batch[i].body;
    }
    let rows: { topic: string }[];
    try {
      rows = await this.#sql.unsafe(this.#queries.publishMany, [topics, bodies], {
        prepare: true,
      }) as unknown as { topic: string }[];
    } catch (error) {
      if ((error as { severity?: unknown } | null)?.severity === "ERROR") {
        // The server refused the statement (so it wrote nothing): each on its own, so that each
        // caller gets its own outcome.
        await Promise.all(batch.map((w) => this.#one(w.topic, w.body).then(w.resolve, w.reject)));
      } else {
        // The connection failed: the statement may have committed, so none is sent again (as a
        // lone publish would, each fails and its caller decides).
        for (const w of batch) w.reject(error);
      }
      return;
    }
    const hit = new Set(rows.map((r) => r.topic));
    for (const w of batch) w.resolve(hit.has(w.topic));
  }

  /** Resolves once no publish waits or runs. */
  drain(): Promise<void> {
    // publishes wait only while statements run, and the last one to finish sends them
    if (this.#inflight === 0) return Promise.resolve();
    return new Promise((resolve) => this.#idle.push(resolve));
  }
}
