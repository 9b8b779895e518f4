/**
 * `kvStream()`: the realtime broker on Redis Streams. Every topic is one stream,
 * `<keyPrefix><topic>`, trimmed to about `maxLen` entries; a message's id is its stream entry id
 * (`<ms>-<seq>`, increasing, usable as an SSE event id), so any process on the same Redis can
 * resume a subscriber after the last id it saw.
 *
 * @module
 */

import type { Logger } from "@fw/runtime";
import { checkRedisSource, type RedisConnections, type RedisSource } from "../_redis.ts";
import { keySlot } from "../_redis_cluster.ts";
import {
  type RealtimeBroker,
  type RealtimeCapabilities,
  RealtimeCursorError,
  type RealtimeMessage,
  type RealtimeSubscribeOptions,
  type RealtimeSubscription,
  type RealtimeTopic,
} from "./realtime.ts";
import {
  checkDuration,
  checkInteger,
  checkKeyPrefix,
  compareStreamIds,
  encodePayload,
  formatStreamId,
  LazyRedis,
  parseStreamId,
  type StreamId,
  streamId,
  ZERO_ID,
} from "./_kv_common.ts";
import { checkPayload, checkSubscription, topicName } from "./_fanout.ts";
import { KvSubscription } from "./_kv_subscriber.ts";
import { readStreamInfo, redisTime, type StreamInfo } from "./_stream_info.ts";
import { StreamReader, toMessage } from "./_stream_reader.ts";

/** Options of {@linkcode kvStream}. */
export interface KvStreamOptions extends RedisSource {
  /** Prefix of the stream keys (default `"fw:realtime:"`); the key of a topic is prefix + name. */
  readonly keyPrefix?: string;
  /**
   * Entries kept per topic for resuming (default 1000). Trimming is approximate: a stream keeps at
   * least this many, and up to about a hundred more. Give every broker on one prefix the same value.
   */
  readonly maxLen?: number;
  /** A resume reaches back at most this many ms (default: as far as `maxLen` keeps). */
  readonly replayTtlMs?: number;
  /** Logs callbacks that throw and a lost reader connection. */
  readonly logger?: Logger;
}

const OWNER = "kvStream()";
const PAGE = 500;
type Entry = [id: string, fields: string[]];

/** The Redis Streams realtime broker; create one with {@linkcode kvStream}. */
export class KvStream implements RealtimeBroker {
  /** Always `"kvstream"`. */
  readonly name = "kvstream";
  /** Replays a retained window: `{ replay: true }`. */
  readonly capabilities: RealtimeCapabilities = Object.freeze({ replay: true });
  readonly #prefix: string;
  readonly #maxLen: number;
  readonly #ttl: number;
  readonly #logger: Logger | undefined;
  readonly #redis: LazyRedis;
  /** One reader for every topic; on a Redis Cluster, one per hash slot in use. */
  readonly #readers = new Map<string | number, StreamReader>();
  readonly #subscriptions = new Set<KvSubscription>();

  /**
   * Checks the options; connects on {@linkcode KvStream.start} or the first publish or subscribe.
   *
   * @param options Connection, key prefix, window and logger.
   * @throws {TypeError} For a missing or doubled `url`/`client`, or an empty `keyPrefix`.
   * @throws {RangeError} For a `maxLen` below 1 or a `replayTtlMs` that is not a positive number.
   */
  constructor(options: KvStreamOptions) {
    checkRedisSource(OWNER, options);
    this.#redis = new LazyRedis(OWNER, { url: options.url, client: options.client });
    this.#prefix = checkKeyPrefix(OWNER, options.keyPrefix, "fw:realtime:");
    this.#maxLen = checkInteger(OWNER, "maxLen", options.maxLen ?? 1000, 1);
    this.#ttl = checkDuration(OWNER, "replayTtlMs", options.replayTtlMs);
    this.#logger = options.logger;
  }

  /**
   * Connects to Redis (the first publish or subscribe does it too).
   *
   * @throws {Error} `kvStream() cannot connect to Redis at <url>: ...` when Redis is unreachable.
   */
  async start(): Promise<void> {
    await this.#redis.get();
  }

  /** Validates (given a `Topic`) and appends the payload to the topic's stream (`XADD`). */
  async publish(topic: RealtimeTopic, payload: unknown): Promise<RealtimeMessage> {
    const name = topicName(topic);
    checkPayload(topic, payload);
    const redis = await this.#redis.get();
    const id = await redis.main.sendCommand([
      "XADD",
      this.#prefix + name,
      "MAXLEN",
      "~",
      String(this.#maxLen),
      "*",
      "p",
      encodePayload(payload),
    ]);
    return Object.freeze({ id: String(id), topic: name, payload });
  }

  /**
   * Subscribes; with `from` an id, first replays the retained entries after it. Live entries that
   * arrive meanwhile wait, so the callback sees every message once, in order.
   */
  async subscribe(
    topic: RealtimeTopic,
    callback: (message: RealtimeMessage) => void | Promise<void>,
    options: RealtimeSubscribeOptions = {},
  ): Promise<RealtimeSubscription> {
    const name = checkSubscription(topic, callback);
    const from = options.from ?? "latest";
    let wanted: StreamId | undefined;
    if (from !== "latest") {
      wanted = parseStreamId(from);
      if (!wanted || compareStreamIds(wanted, ZERO_ID) === 0) {
        throw new RealtimeCursorError(name, String(from), "malformed");
      }
    }
    const redis = await this.#redis.get();
    const key = this.#prefix + name;
    const slot = redis.cluster ? keySlot(key) : "all";
    let reader = this.#readers.get(slot);
    if (!reader) {
      reader = new StreamReader(redis, {
        count: PAGE,
        blockMs: 5_000,
        maxLen: this.#maxLen,
        name: `fw:kvstream:${this.#prefix}`.replace(/[^\x21-\x7e]/g, "_"),
        logger: this.#logger,
        ...(redis.cluster ? { routeKey: key } : {}),
      });
      this.#readers.set(slot, reader);
    }
    const state = reader.topic(name, key);
    const subscription = new KvSubscription(
      name,
      callback,
      options.onGap,
      this.#logger,
      (s) => {
        reader!.leave(state, s);
        this.#subscriptions.delete(s);
      },
      from,
      true,
    );
    state.subscriptions.add(subscription);
    this.#subscriptions.add(subscription);
    try {
      // Registered first, then looked at: whatever the reader fans out from here on is held.
      const info = await readStreamInfo(redis.main, key);
      const last = info?.last ?? ZERO_ID;
      reader.follow(state, last);
      if (wanted) {
        subscription.recovered = await this.#replay(redis, subscription, from, wanted, info);
      }
      subscription.goLive(last);
      return subscription;
    } catch (error) {
      await subscription.close();
      throw error;
    }
  }

  /**
   * Replays the entries after `wanted` up to the stream's last id; `false` (and `onGap`) when some
   * of them are no longer retained.
   */
  async #replay(
    redis: RedisConnections,
    subscription: KvSubscription,
    from: string,
    wanted: StreamId,
    info: StreamInfo | undefined,
  ): Promise<boolean> {
    const { topic } = subscription, key = this.#prefix + topic, main = redis.main;
    const last = info?.last ?? ZERO_ID;
    if (compareStreamIds(wanted, last) > 0) {
      // A stream that does not exist (any more) has no last id: only the clock tells.
      if (info || wanted.ms > await redisTime(main)) {
        throw new RealtimeCursorError(topic, from, "newer than the last id");
      }
      subscription.gap("trimmed");
      return false;
    }
    const oldest = this.#ttl === Infinity ? -Infinity : await redisTime(main) - this.#ttl;
    const replay: Entry[] = [];
    let cursor = wanted;
    while (compareStreamIds(cursor, last) < 0) {
      const page = await main.sendCommand([
        "XRANGE",
        key,
        `(${formatStreamId(cursor)}`,
        formatStreamId(last),
        "COUNT",
        String(PAGE),
      ]) as Entry[];
      // Looked at after the read: if the window now starts after the cursor, entries after it
      // may have been trimmed before the read.
      const now = await readStreamInfo(main, key);
      const trimmed = !now?.first || compareStreamIds(cursor, now.first) < 0;
      const expired = replay.length === 0 && page.length > 0 && streamId(page[0][0]).ms < oldest;
      if (trimmed || expired || page.length === 0) {
        subscription.gap("trimmed");
        return false;
      }
      replay.push(...page);
      cursor = streamId(page[page.length - 1][0]);
      if (page.length < PAGE) break;
    }
    for (const [id, fields] of replay) {
      const message = toMessage(topic, id, fields, this.#logger);
      if (message) subscription.replay(message, streamId(id));
    }
    return true;
  }

  /** Closes every subscription, stops the reader and closes the connections fw opened. */
  async close(): Promise<void> {
    if (!this.#redis.refuse()) return;
    await Promise.all([...this.#subscriptions].map((s) => s.close()));
    await Promise.all([...this.#readers.values()].map((r) => r.close()));
    await this.#redis.close();
  }
}

/**
 * Creates the Redis Streams realtime broker: subscribers anywhere on the same Redis get every
 * message, and a subscriber that comes back with the last id it saw gets what it missed.
 *
 * One connection publishes; one more, opened on the first subscription, reads every subscribed
 * topic with a single blocking `XREAD` and fans out to the local subscribers (on a Redis Cluster,
 * given `url` as a list of node URLs, one such reader per hash slot in use). A lost connection
 * resumes after the last id read, replaying what was published meanwhile. Resuming with `from`
 * gives `recovered: true` when every message after that id is still retained (and not older than
 * `replayTtlMs`); otherwise `recovered: false` and one `onGap({ reason: "trimmed" })` call, and
 * delivery goes on live. An id the stream never issued (malformed, or newer than its last id) is
 * refused with a `RealtimeCursorError`.
 *
 * @param options `url` or `client`, `keyPrefix`, `maxLen`, `replayTtlMs`, `logger`.
 * @returns The broker (connected on first use or by `start()`).
 * @throws {TypeError} For a missing or doubled `url`/`client`, or an empty `keyPrefix`.
 * @throws {RangeError} For a `maxLen` below 1 or a `replayTtlMs` that is not a positive number.
 *
 * @example
 * ```ts ignore
 * import { Int, topic } from "@fw/events";
 * import { kvStream } from "@fw/events/kvstore";
 * const Ticks = topic("ticks", { n: Int });
 * const broker = kvStream({ url: "redis://127.0.0.1:6379", keyPrefix: "app:rt:", maxLen: 500 });
 * const first = await broker.publish(Ticks, { n: 1 });
 * await broker.publish(Ticks, { n: 2 });
 * const sub = await broker.subscribe(Ticks, (m) => console.log(m.id, m.payload), {
 *   from: first.id, // replays { n: 2 }, then live
 *   onGap: (gap) => console.warn("missed messages after", gap.after),
 * });
 * console.log(sub.recovered); // true
 * await broker.close();
 * ```
 */
export function kvStream(options: KvStreamOptions): KvStream {
  return new KvStream(options);
}
