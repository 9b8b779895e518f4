/**
 * The dead letters the Redis Streams transport keeps when nothing subscribes to `<topic>.dlq`:
 * one Redis stream, `<keyPrefix>:dead-letters`, so they survive restarts and every process on
 * the prefix sees the same list. Bounded like the in-memory buffer: over the limit the oldest are
 * evicted (in the same Lua script as the add), and every eviction is logged and counted.
 *
 * @module
 */

import { type Logger, type Meter, noopMeter } from "@fw/runtime";
import type { RedisClient } from "../../_redis.ts";
import type { Envelope } from "../../envelope.ts";
import type { DeadLetter, DeadLetterStore } from "../../transport.ts";
import { keys } from "./_keys.ts";
import { DEAD_ADD, DEAD_TAKE } from "./_scripts.ts";

/** Options of {@linkcode RedisDeadLetters}. */
export interface RedisDeadLettersOptions {
  /** The connection (resolved when the transport has connected). */
  redis: () => Promise<RedisClient>;
  /** Key prefix (namespace). */
  prefix: string;
  /** Maximum kept (default 1000). */
  limit?: number;
  /** Logs evictions. */
  logger?: Logger;
  /** Counts evictions as `events.dlq.evicted`. */
  meter?: Meter;
}

function parse(record: unknown): DeadLetter | undefined {
  try {
    const d = JSON.parse(String(record)) as DeadLetter;
    return d && typeof d === "object" && d.envelope ? d : undefined;
  } catch {
    return undefined;
  }
}

/**
 * A bounded, persistent dead-letter store in Redis, shared by every process on the key prefix.
 *
 * @example
 * ```ts ignore
 * import assert from "node:assert/strict";
 * import { kvStreamTransport } from "@fw/events/kvstore";
 * const transport = kvStreamTransport({ url: "redis://127.0.0.1:6379", keyPrefix: "shop:" });
 * const dead = await transport.deadLetters.list({ topic: "orders.paid" });
 * assert.ok(Array.isArray(dead));
 * await transport.close();
 * ```
 */
export class RedisDeadLetters implements DeadLetterStore {
  readonly #redis: () => Promise<RedisClient>;
  readonly #key: string;
  readonly #limit: number;
  readonly #logger?: Logger;
  readonly #evictions;

  /**
   * Creates a store over a connection and key prefix.
   *
   * @param options Connection, prefix, limit, logger and meter.
   * @throws {TypeError} For a limit that is not a positive integer.
   */
  constructor(options: RedisDeadLettersOptions) {
    const limit = options.limit ?? 1000;
    if (!Number.isInteger(limit) || limit < 1) {
      throw new TypeError(
        `Invalid kvStreamTransport() option "deadLetterLimit": expected a positive integer, got ${limit}`,
      );
    }
    this.#redis = options.redis;
    this.#key = keys.deadLetters(options.prefix);
    this.#limit = limit;
    this.#logger = options.logger;
    this.#evictions = (options.meter ?? noopMeter).counter("events.dlq.evicted", {
      description: "Dead letters evicted from a full buffer",
    });
  }

  /** How many dead letters are kept. */
  async count(): Promise<number> {
    return Number(await (await this.#redis()).sendCommand(["XLEN", this.#key]));
  }

  /**
   * Keeps one dead letter, evicting the oldest while over the limit.
   *
   * @param envelope The `<topic>.dlq` envelope.
   * @param now Time of dead-lettering (ms since the epoch).
   */
  async add(envelope: Envelope, now: number): Promise<void> {
    const record: DeadLetter = { envelope, deadAt: now };
    const evicted = await DEAD_ADD.run(await this.#redis(), [this.#key], [
      envelope.id,
      JSON.stringify(record),
      String(this.#limit),
    ]) as unknown[];
    for (const r of evicted ?? []) {
      const d = parse(r);
      this.#evictions.add(1);
      this.#logger?.warn("dead letter evicted: the buffer is full", {
        traceId: d?.envelope.traceId,
        topic: d?.envelope.topic,
        messageId: d?.envelope.id,
        limit: this.#limit,
      });
    }
  }

  /** Kept dead letters, oldest first, optionally of one topic (original or `.dlq` name). */
  async list(options: { topic?: string } = {}): Promise<DeadLetter[]> {
    const t = options.topic;
    const entries = await (await this.#redis()).sendCommand(["XRANGE", this.#key, "-", "+"]);
    const out: DeadLetter[] = [];
    for (const e of (entries ?? []) as [string, string[]][]) {
      const d = parse(e[1]?.[3]);
      if (!d) continue;
      const env = d.envelope;
      if (t === undefined || env.topic === t || env.attributes?.["dlq.original_topic"] === t) {
        out.push(d);
      }
    }
    return out;
  }

  /**
   * Removes and returns the dead letters with these envelope ids (each only once, even when two
   * processes take the same ids at the same time: one Lua script does the look-up and removal).
   */
  async take(ids: readonly string[]): Promise<DeadLetter[]> {
    if (ids.length === 0) return [];
    const taken = await DEAD_TAKE.run(await this.#redis(), [this.#key], [...ids]) as unknown[];
    return (taken ?? []).map(parse).filter((d): d is DeadLetter => d !== undefined);
  }
}
