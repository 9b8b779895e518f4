/**
 * The bounded in-memory dead-letter buffer: dead letters with no
 * `<topic>.dlq` subscriber are kept here, 1000 per broker by default; when full the oldest is
 * evicted, and every eviction is logged and counted.
 *
 * @module
 */

import { type Logger, type Meter, noopMeter } from "@fw/runtime";
import type { Envelope } from "./envelope.ts";
import type { DeadLetter, DeadLetterStore } from "./transport.ts";

/** Options of {@linkcode MemoryDeadLetters}. */
export interface MemoryDeadLettersOptions {
  /** Maximum kept (default 1000). */
  limit?: number;
  /** Logs evictions. */
  logger?: Logger;
  /** Counts evictions as `events.dlq.evicted`. */
  meter?: Meter;
}

/**
 * A bounded FIFO of dead letters.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { MemoryDeadLetters } from "@fw/events";
 * const store = new MemoryDeadLetters({ limit: 1 });
 * const env = { id: "1", topic: "a.dlq", payload: {}, attributes: {}, traceId: "t", publishedAt: 0 };
 * store.add(env, 0);
 * store.add({ ...env, id: "2" }, 1);
 * assert.deepEqual((await store.list()).map((d) => d.envelope.id), ["2"]);
 * assert.equal(store.evicted, 1);
 * ```
 */
export class MemoryDeadLetters implements DeadLetterStore {
  readonly #limit: number;
  readonly #items: DeadLetter[] = [];
  readonly #logger?: Logger;
  readonly #evictions;
  #evicted = 0;

  /**
   * Creates an empty buffer.
   *
   * @param options Limit, logger and meter.
   * @throws {TypeError} For a limit that is not a positive integer.
   */
  constructor(options: MemoryDeadLettersOptions = {}) {
    const limit = options.limit ?? 1000;
    if (!Number.isInteger(limit) || limit < 1) {
      throw new TypeError(`Invalid dead-letter limit ${limit}: expected a positive integer`);
    }
    this.#limit = limit;
    this.#logger = options.logger;
    this.#evictions = (options.meter ?? noopMeter).counter("events.dlq.evicted", {
      description: "Dead letters evicted from a full buffer",
    });
  }

  /** How many dead letters were evicted because the buffer was full. */
  get evicted(): number {
    return this.#evicted;
  }

  /** How many are kept. */
  get size(): number {
    return this.#items.length;
  }

  /**
   * Keeps one dead letter, evicting the oldest when full.
   *
   * @param envelope The `<topic>.dlq` envelope.
   * @param now Time of dead-lettering.
   */
  add(envelope: Envelope, now: number): void {
    if (this.#items.length >= this.#limit) {
      const old = this.#items.shift()!;
      this.#evicted++;
      this.#evictions.add(1);
      this.#logger?.warn("dead letter evicted: the buffer is full", {
        traceId: old.envelope.traceId,
        topic: old.envelope.topic,
        messageId: old.envelope.id,
        limit: this.#limit,
      });
    }
    this.#items.push({ envelope, deadAt: now });
  }

  /** Kept dead letters, oldest first, optionally of one topic (original or `.dlq` name). */
  list(options: { topic?: string } = {}): Promise<DeadLetter[]> {
    const t = options.topic;
    return Promise.resolve(
      t === undefined
        ? [...this.#items]
        : this.#items.filter((d) =>
          d.envelope.topic === t || d.envelope.attributes["dlq.original_topic"] === t
        ),
    );
  }

  /** Removes and returns the dead letters with these envelope ids. */
  take(ids: readonly string[]): Promise<DeadLetter[]> {
    const want = new Set(ids);
    const out: DeadLetter[] = [];
    for (let i = this.#items.length - 1; i >= 0; i--) {
      if (want.has(this.#items[i].envelope.id)) out.unshift(...this.#items.splice(i, 1));
    }
    return Promise.resolve(out);
  }
}
