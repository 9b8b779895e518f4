/**
 * The dead letters the Deno KV transport keeps when nothing subscribes to `<topic>.dlq`: stored in
 * KV under the transport's key prefix, so they survive restarts and every process sharing the
 * database sees the same list. Bounded like the in-memory buffer: over the
 * limit the oldest are evicted, and every eviction is logged and counted.
 *
 * @module
 */

import { type Logger, type Meter, noopMeter } from "@fw/runtime";
import type { Envelope } from "../../envelope.ts";
import type { DeadLetter, DeadLetterStore } from "../../transport.ts";
import { keys } from "./_keys.ts";
import { retryLocked } from "./_registry.ts";

/** Options of {@linkcode DenoKvDeadLetters}. */
export interface DenoKvDeadLettersOptions {
  /** Opens (or returns) the database. */
  kv: () => Promise<Deno.Kv>;
  /** Key prefix (namespace). */
  prefix: string;
  /** Maximum kept (default 1000). */
  limit?: number;
  /** Logs evictions. */
  logger?: Logger;
  /** Counts evictions as `events.dlq.evicted`. */
  meter?: Meter;
}

/** `-1` for a `Deno.KvU64` sum (the counter wraps). */
const MINUS_ONE = (1n << 64n) - 1n;

let sequence = 0;

/** A sortable key part: time of dead-lettering, then a per-process sequence and a random tail. */
function orderKey(now: number): string {
  const seq = (sequence = (sequence + 1) % 1e9).toString().padStart(9, "0");
  return `${String(Math.max(0, Math.floor(now))).padStart(15, "0")}-${seq}-${
    crypto.randomUUID().slice(0, 8)
  }`;
}

/**
 * A bounded, persistent dead-letter store in Deno KV, shared by every process on the database.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { DenoKvDeadLetters } from "@fw/events/denokv";
 * const kv = await Deno.openKv(":memory:");
 * const store = new DenoKvDeadLetters({ kv: () => Promise.resolve(kv), prefix: "app", limit: 1 });
 * const env = { id: "1", topic: "a.dlq", payload: {}, attributes: {}, traceId: "t", publishedAt: 0 };
 * await store.add(env, 1);
 * await store.add({ ...env, id: "2" }, 2);
 * assert.deepEqual((await store.list()).map((d) => d.envelope.id), ["2"]);
 * assert.deepEqual((await store.take(["2"])).map((d) => d.envelope.id), ["2"]);
 * assert.equal(await store.count(), 0);
 * kv.close();
 * ```
 */
export class DenoKvDeadLetters implements DeadLetterStore {
  readonly #kv: () => Promise<Deno.Kv>;
  readonly #prefix: string;
  readonly #limit: number;
  readonly #logger?: Logger;
  readonly #evictions;

  /**
   * Creates a store over a database and key prefix.
   *
   * @param options Database, prefix, limit, logger and meter.
   * @throws {TypeError} For a limit that is not a positive integer.
   */
  constructor(options: DenoKvDeadLettersOptions) {
    const limit = options.limit ?? 1000;
    if (!Number.isInteger(limit) || limit < 1) {
      throw new TypeError(
        `Invalid Deno KV transport option "deadLetterLimit" ${limit}: expected a positive integer`,
      );
    }
    this.#kv = options.kv;
    this.#prefix = options.prefix;
    this.#limit = limit;
    this.#logger = options.logger;
    this.#evictions = (options.meter ?? noopMeter).counter("events.dlq.evicted", {
      description: "Dead letters evicted from a full buffer",
    });
  }

  /** How many dead letters are kept. */
  async count(): Promise<number> {
    const kv = await this.#kv();
    const entry = await kv.get<Deno.KvU64>(keys.deadCount(this.#prefix));
    return Number(entry.value?.value ?? 0n);
  }

  /**
   * Keeps one dead letter, evicting the oldest while over the limit.
   *
   * @param envelope The `<topic>.dlq` envelope.
   * @param now Time of dead-lettering (ms since the epoch).
   */
  async add(envelope: Envelope, now: number): Promise<void> {
    const kv = await this.#kv();
    const p = this.#prefix;
    const record: DeadLetter = { envelope, deadAt: now };
    const key = keys.dead(p, orderKey(now));
    await retryLocked(() => kv.atomic().set(key, record).sum(keys.deadCount(p), 1n).commit());
    await this.#evict(kv);
  }

  async #evict(kv: Deno.Kv): Promise<void> {
    const p = this.#prefix;
    for (let round = 0; round < 10; round++) {
      const excess = (await this.count()) - this.#limit;
      if (excess <= 0) return;
      let evicted = 0;
      for await (const e of kv.list<DeadLetter>({ prefix: keys.deadAll(p) }, { limit: excess })) {
        // The check makes two processes evicting at once remove each entry only once.
        const r = await retryLocked(() =>
          kv.atomic().check(e).delete(e.key).sum(keys.deadCount(p), MINUS_ONE).commit()
        );
        if (!r.ok) continue;
        evicted++;
        this.#evictions.add(1);
        this.#logger?.warn("dead letter evicted: the buffer is full", {
          traceId: e.value.envelope.traceId,
          topic: e.value.envelope.topic,
          messageId: e.value.envelope.id,
          limit: this.#limit,
        });
      }
      if (evicted === 0) return;
    }
  }

  /** Kept dead letters, oldest first, optionally of one topic (original or `.dlq` name). */
  async list(options: { topic?: string } = {}): Promise<DeadLetter[]> {
    const kv = await this.#kv();
    const t = options.topic;
    const out: DeadLetter[] = [];
    for await (const e of kv.list<DeadLetter>({ prefix: keys.deadAll(this.#prefix) })) {
      const env = e.value.envelope;
      if (t === undefined || env.topic === t || env.attributes?.["dlq.original_topic"] === t) {
        out.push(e.value);
      }
    }
    return out;
  }

  /**
   * Removes and returns the dead letters with these envelope ids (each only once, even when two
   * processes take the same ids at the same time).
   */
  async take(ids: readonly string[]): Promise<DeadLetter[]> {
    const want = new Set(ids);
    if (want.size === 0) return [];
    const kv = await this.#kv();
    const p = this.#prefix;
    const out: DeadLetter[] = [];
    for await (const e of kv.list<DeadLetter>({ prefix: keys.deadAll(p) })) {
      if (!want.has(e.value.envelope.id)) continue;
      const r = await retryLocked(() =>
        kv.atomic().check(e).delete(e.key).sum(keys.deadCount(p), MINUS_ONE).commit()
      );
      if (r.ok) out.push(e.value);
    }
    return out;
  }
}
