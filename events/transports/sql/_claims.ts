/**
 * Internal to the SQL transport: one subscriber instance's claim loop, and the batched writes of
 * acknowledgements shared by a transport's subscriptions.
 *
 * A wake-up (a `NOTIFY` for the topic, the slow poll, a local timer for a retry, a reconnect)
 * makes the loop claim ready rows of its group with `FOR UPDATE SKIP LOCKED`, up to the room left
 * under `batchSize` unsettled deliveries, and offer them to the consumer. A full batch means more
 * may be waiting, so the loop claims again as deliveries settle: once at least half of
 * `batchSize` is free (or nothing is in flight), so that each claim, a round trip and a commit,
 * takes many rows rather than the one or two that a single settle frees. A wake-up that comes
 * while less room is free is kept for then. A claim moves the row's
 * `available_at` to the visibility deadline; the transport extends the deadline of the rows its
 * handlers still run, so only the claims of a consumer that died expire and are taken over.
 *
 * @module
 */

import type { Clock, Logger, TimerHandle } from "@fw/runtime";
import type { Envelope } from "../../envelope.ts";
import type { Delivery, DeliveryListener, SubscriptionSpec } from "../../transport.ts";
import type { SqlQueryable } from "../../_postgres.ts";
import type { SqlQueries } from "./_queries.ts";

/** How long a delivery refused with a full queue waits before it is offered again. */
export const REFUSED_RETRY_MS = 250;
/** Pause after a failed claim before the loop tries again. */
const ERROR_PAUSE_MS = 200;

/**
 * Settles like `work`, or rejects after `ms`. A query on a connection that the server killed can,
 * rarely, never settle; a claim loop or ack batch waiting on it would stall for good. Giving up
 * is safe: rows a late claim took expire and are claimed again, a late ack is repeated.
 *
 * @param work The query.
 * @param ms Time limit.
 * @param what For the error message.
 * @returns Its result.
 */
export function withDeadline<T>(work: PromiseLike<T>, ms: number, what: string): Promise<T> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  return Promise.race([
    Promise.resolve(work),
    new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new Error(`${what} took more than ${ms} ms`)), ms);
    }),
  ]).finally(() => clearTimeout(timer));
}

/** Shared services of a transport's claim loops. */
export interface ClaimContext {
  readonly sql: SqlQueryable;
  readonly queries: SqlQueries;
  /** This transport's id in `claimed_by`. */
  readonly owner: string;
  readonly visibility: number;
  readonly batchSize: number;
  readonly clock: Clock;
  readonly acks: AckBatcher;
  readonly logger?: Logger;
}

/**
 * Deletes acknowledged rows in batches: acks that arrive while a delete runs go in the next one.
 * A failed delete is tried again a few times; after that the acks reject (the consumer logs it)
 * and the rows come back when their claims expire (at-least-once).
 */
export class AckBatcher {
  /** Ids of the next delete, and the promise its acks share (settled when it ends). */
  #ids: string[] = [];
  #next: { promise: Promise<void>; resolve: () => void; reject: (e: unknown) => void } | undefined;
  #flushing = false;
  readonly #sql: SqlQueryable;
  readonly #query: string;

  readonly #deadline: number;

  constructor(sql: SqlQueryable, query: string, deadlineMs: number) {
    this.#sql = sql;
    this.#query = query;
    this.#deadline = deadlineMs;
  }

  /** Queues one row id; resolves when its delete committed (one promise per delete, shared). */
  add(id: string): Promise<void> {
    this.#ids.push(id);
    const next = this.#next ??= Promise.withResolvers<void>();
    if (!this.#flushing) {
      this.#flushing = true;
      queueMicrotask(() => void this.#flush());
    }
    return next.promise;
  }

  async #flush(): Promise<void> {
    while (this.#ids.length > 0) {
      const ids = this.#ids;
      const batch = this.#next!;
      this.#ids = [];
      this.#next = undefined;
      let error: unknown;
      for (let attempt = 1; attempt <= 5; attempt++) {
        try {
          await withDeadline(
            this.#sql.unsafe(this.#query, [ids], { prepare: true }),
            this.#deadline,
            "acknowledging messages",
          );
          error = undefined;
          break;
        } catch (err) {
          error = err;
          await new Promise((r) => setTimeout(r, 50 * attempt));
        }
      }
      error === undefined ? batch.resolve() : batch.reject(error);
    }
    this.#flushing = false;
  }

  /** Resolves once every queued ack was written (or gave up). */
  async drain(): Promise<void> {
    while (this.#flushing || this.#ids.length > 0) {
      await new Promise((r) => setTimeout(r, 5));
    }
  }
}

interface ClaimedRow {
  id: string;
  attempt: number;
  envelope: unknown;
}

/** One subscriber instance: claims its group's rows and offers them to the consumer. */
export class ClaimLoop {
  readonly spec: SubscriptionSpec;
  readonly #listener: DeliveryListener;
  readonly #c: ClaimContext;
  readonly #instance: string;
  /** The room a claim waits for while deliveries are in flight (half of `batchSize`). */
  readonly #refill: number;
  /** Rows offered and not yet settled. */
  readonly #inflight = new Set<string>();
  readonly #timers = new Set<TimerHandle>();
  #wanted = false;
  #more = false;
  #loop: Promise<void> | undefined;
  #closed = false;

  constructor(spec: SubscriptionSpec, listener: DeliveryListener, context: ClaimContext) {
    this.spec = spec;
    this.#listener = listener;
    this.#c = context;
    this.#instance = spec.distribution === "broadcast" ? spec.instanceId : "";
    this.#refill = Math.max(1, Math.ceil(context.batchSize / 2));
  }

  /** Row ids this instance holds (for extending or releasing their claims). */
  inflight(): string[] {
    return [...this.#inflight];
  }

  /** Looks for ready rows now (or right after the running claim). */
  wake(): void {
    if (this.#closed) return;
    this.#wanted = true;
    if (this.#loop) return;
    this.#loop = this.#run().finally(() => {
      this.#loop = undefined;
      if (this.#wanted && !this.#closed && this.#room() > 0) this.wake();
    });
  }

  /** Wakes the loop after `ms` (a retry or a refused delivery becoming due). */
  wakeIn(ms: number): void {
    if (this.#closed) return;
    const clock = this.#c.clock;
    const handle = clock.setTimeout(() => {
      this.#timers.delete(handle);
      this.wake();
    }, Math.max(0, ms) + 5);
    this.#timers.add(handle);
  }

  #room(): number {
    return this.#c.batchSize - this.#inflight.size;
  }

  async #run(): Promise<void> {
    while (this.#wanted && !this.#closed) {
      this.#wanted = false;
      const room = this.#room();
      if (room <= 0 || (room < this.#refill && this.#inflight.size > 0)) {
        // Claimed when enough deliveries settled (see settle() in #offer).
        this.#more = true;
        return;
      }
      let rows: ClaimedRow[];
      try {
        const s = this.spec, c = this.#c;
        rows = await withDeadline(
          c.sql.unsafe(
            c.queries.claim,
            [s.topic, s.group, this.#instance, c.owner, c.visibility, room],
            { prepare: true },
          ),
          Math.max(c.visibility, 2000),
          "claiming messages",
        ) as unknown as ClaimedRow[];
      } catch (err) {
        if (this.#closed) return;
        this.#c.logger?.warn("sql transport: claiming messages failed; trying again", {
          error: err,
          topic: this.spec.topic,
          group: this.spec.group,
        });
        this.wakeIn(ERROR_PAUSE_MS);
        return;
      }
      this.#more = rows.length >= room;
      if (this.#more) this.#wanted = true;
      if (this.#closed) {
        await this.#release(rows.map((r) => r.id), 0);
        return;
      }
      // Row ids are bigint columns, as decimal text: the shorter one is smaller.
      rows.sort((a, b) => a.id.length - b.id.length || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
      this.#offerAll(rows);
    }
  }

  #offerAll(rows: ClaimedRow[]): void {
    for (let i = 0; i < rows.length; i++) {
      const row = rows[i];
      if (this.#inflight.has(row.id)) continue; // Still running here: its claim is extended.
      this.#inflight.add(row.id);
      const admission = this.#offer(row);
      if (admission === "rejected") {
        // Queue full: hand this and the rest back, and offer them again a little later.
        this.#inflight.delete(row.id);
        const back = rows.slice(i).map((r) => r.id).filter((id) => !this.#inflight.has(id));
        this.#release(back, REFUSED_RETRY_MS).catch((error) =>
          // Not handed back: the claims expire after the visibility timeout instead.
          this.#c.logger?.warn("sql transport: could not hand refused messages back", { error })
        );
        this.wakeIn(REFUSED_RETRY_MS);
        this.#more = false;
        this.#wanted = false;
        return;
      }
    }
  }

  #offer(row: ClaimedRow): "accepted" | "rejected" | "dropped" {
    let done = false;
    const settle = (): boolean => {
      if (done) return false;
      done = true;
      this.#inflight.delete(row.id);
      if (this.#more && this.#room() >= this.#refill) this.wake();
      return true;
    };
    const delivery: Delivery = {
      envelope: row.envelope as Envelope,
      attempt: row.attempt,
      ack: () => settle() ? this.#c.acks.add(row.id) : Promise.resolve(),
      retry: (delayMs: number) => {
        if (!settle()) return Promise.resolve();
        const c = this.#c;
        const delay = Math.max(0, Math.round(delayMs));
        return Promise.resolve(c.sql.unsafe(c.queries.retry, [row.id, delay, c.owner], {
          prepare: true,
        })).then(() => this.wakeIn(delay));
      },
    };
    let admission;
    try {
      admission = this.#listener(delivery);
    } catch (err) {
      this.#c.logger?.error("sql transport: a subscriber threw on delivery", { error: err });
      admission = "rejected" as const;
    }
    if (admission === "rejected") done = true;
    return admission;
  }

  async #release(ids: string[], delayMs: number): Promise<void> {
    if (ids.length === 0) return;
    const c = this.#c;
    await c.sql.unsafe(c.queries.release, [ids, delayMs, c.owner], { prepare: true });
  }

  /** Stops claiming; resolves when no further offer will be made. */
  async close(): Promise<void> {
    this.#closed = true;
    for (const t of this.#timers) this.#c.clock.clearTimeout(t);
    this.#timers.clear();
    await this.#loop;
  }
}
