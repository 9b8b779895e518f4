/**
 * `kvPubSub()`: the live-only realtime broker on Redis pub/sub. Every topic is one channel,
 * `<keyPrefix><topic>`; Redis keeps nothing, so a subscriber gets what is published while it is
 * subscribed and cannot resume. On a Redis Cluster it uses sharded pub/sub (`SPUBLISH`,
 * `SSUBSCRIBE`): each channel lives on the shard that serves its slot, so the traffic spreads over
 * the shards instead of reaching every node.
 *
 * @module
 */

import type { Logger } from "@fw/runtime";
import { checkRedisSource, type RedisClient, type RedisSource } from "../_redis.ts";
import type {
  RealtimeBroker,
  RealtimeCapabilities,
  RealtimeMessage,
  RealtimeSubscribeOptions,
  RealtimeSubscription,
  RealtimeTopic,
} from "./realtime.ts";
import { checkKeyPrefix, encodePayload, LazyRedis } from "./_kv_common.ts";
import { checkPayload, checkSubscription, topicName } from "./_fanout.ts";
import { KvSubscription } from "./_kv_subscriber.ts";

/** Options of {@linkcode kvPubSub}. */
export interface KvPubSubOptions extends RedisSource {
  /** Prefix of the channel names (default `"fw:realtime:"`); a topic's channel is prefix + name. */
  readonly keyPrefix?: string;
  /** Logs callbacks that throw and messages that cannot be read. */
  readonly logger?: Logger;
}

const OWNER = "kvPubSub()";

interface Channel {
  readonly topic: string;
  readonly subscriptions: Set<KvSubscription>;
  /** Settles when Redis has confirmed the `SUBSCRIBE`. */
  readonly ready: Promise<unknown>;
}

/** The Redis pub/sub realtime broker; create one with {@linkcode kvPubSub}. */
export class KvPubSub implements RealtimeBroker {
  /** Always `"kvpubsub"`. */
  readonly name = "kvpubsub";
  /** Live only: `{ replay: false }`. */
  readonly capabilities: RealtimeCapabilities = Object.freeze({ replay: false });
  readonly #prefix: string;
  readonly #logger: Logger | undefined;
  /** The first two parts of every id this broker issues. */
  readonly #origin = `${Date.now()}-${crypto.getRandomValues(new Uint32Array(1))[0]}`;
  readonly #sequences = new Map<string, number>();
  readonly #channels = new Map<string, Channel>();
  readonly #redis: LazyRedis;
  #listener: Promise<RedisClient> | undefined;
  #down = false;

  /**
   * Checks the options; connects on {@linkcode KvPubSub.start} or the first publish or subscribe.
   *
   * @param options Connection, channel prefix and logger.
   * @throws {TypeError} For a missing or doubled `url`/`client`, a `client` without
   * `subscribe()`/`unsubscribe()`, or an empty `keyPrefix`.
   */
  constructor(options: KvPubSubOptions) {
    checkRedisSource(OWNER, options);
    const client = options.client;
    if (client && (typeof client.subscribe !== "function" || !client.unsubscribe)) {
      throw new TypeError(
        `Invalid ${OWNER} option "client": the Redis client has no subscribe() and unsubscribe() methods`,
      );
    }
    this.#redis = new LazyRedis(OWNER, { url: options.url, client });
    this.#prefix = checkKeyPrefix(OWNER, options.keyPrefix, "fw:realtime:");
    this.#logger = options.logger;
  }

  /**
   * Connects to Redis (the first publish or subscribe does it too).
   *
   * @throws {Error} `kvPubSub() cannot connect to Redis at <url>: ...` when Redis is unreachable.
   */
  async start(): Promise<void> {
    await this.#redis.get();
  }

  /**
   * Validates (given a `Topic`) and publishes to the topic's channel. The id is
   * `<ms when this broker was created>-<random number of this broker>-<sequence of the topic>`:
   * unique, and increasing for the messages of one topic that one broker publishes.
   */
  async publish(topic: RealtimeTopic, payload: unknown): Promise<RealtimeMessage> {
    const name = topicName(topic);
    checkPayload(topic, payload);
    const redis = await this.#redis.get();
    const seq = (this.#sequences.get(name) ?? 0) + 1;
    this.#sequences.set(name, seq);
    const id = `${this.#origin}-${seq}`;
    const body = `{"id":${JSON.stringify(id)},"payload":${encodePayload(payload)}}`;
    // On a Redis Cluster, sharded pub/sub: the channel lives on the shard of its slot.
    await redis.main.sendCommand([
      redis.cluster ? "SPUBLISH" : "PUBLISH",
      this.#prefix + name,
      body,
    ]);
    return Object.freeze({ id, topic: name, payload });
  }

  /**
   * Subscribes to what is published from now on. A `from` id cannot be replayed: the subscription
   * says `recovered: false` and calls `onGap` once (reason `"trimmed"`).
   */
  async subscribe(
    topic: RealtimeTopic,
    callback: (message: RealtimeMessage) => void | Promise<void>,
    options: RealtimeSubscribeOptions = {},
  ): Promise<RealtimeSubscription> {
    const name = checkSubscription(topic, callback);
    const from = options.from ?? "latest";
    const listener = await this.#listenerClient();
    const key = this.#prefix + name;
    let channel = this.#channels.get(key);
    if (!channel) {
      const subscriptions = new Set<KvSubscription>();
      const ready = listener.subscribe!(key, (raw) => this.#receive(name, subscriptions, raw));
      channel = { topic: name, subscriptions, ready };
      this.#channels.set(key, channel);
    }
    const joined = channel;
    const subscription = new KvSubscription(
      name,
      callback,
      options.onGap,
      this.#logger,
      (s) => this.#leave(key, joined, s),
      from,
      false,
    );
    joined.subscriptions.add(subscription);
    try {
      await joined.ready;
    } catch (error) {
      await subscription.close();
      throw error;
    }
    if (from !== "latest") {
      subscription.recovered = false;
      subscription.gap("trimmed");
    }
    return subscription;
  }

  #receive(topic: string, subscriptions: Set<KvSubscription>, raw: string): void {
    let message: RealtimeMessage;
    try {
      const { id, payload } = JSON.parse(raw);
      if (typeof id !== "string") throw new Error('no "id"');
      message = Object.freeze({ id, topic, payload });
    } catch (error) {
      this.#logger?.warn("kvPubSub skipped a message it cannot read", { topic, error });
      return;
    }
    for (const subscription of subscriptions) subscription.deliver(message);
  }

  async #leave(key: string, channel: Channel, subscription: KvSubscription): Promise<void> {
    channel.subscriptions.delete(subscription);
    if (channel.subscriptions.size || this.#channels.get(key) !== channel) return;
    this.#channels.delete(key);
    const listener = await this.#listener?.catch(() => undefined);
    await listener?.unsubscribe?.(key).catch(() => {});
  }

  /** The dedicated pub/sub connection; a lost connection is reported to every subscriber. */
  #listenerClient(): Promise<RedisClient> {
    this.#listener ??= (async () => {
      const redis = await this.#redis.get();
      const client = await redis.dedicated();
      await client.sendCommand([
        "CLIENT",
        "SETNAME",
        `fw:kvpubsub:${this.#prefix}`.replace(
          /[^\x21-\x7e]/g,
          "_",
        ),
      ]);
      const lost = () => void (this.#down = !this.#redis.closed);
      client.on("error", lost);
      client.on("end", lost);
      client.on("reconnecting", lost);
      client.on("ready", () => {
        if (!this.#down) return;
        this.#down = false;
        for (const channel of this.#channels.values()) {
          for (const subscription of channel.subscriptions) subscription.gap("disconnected");
        }
      });
      return client;
    })().catch((error) => {
      this.#listener = undefined;
      throw error;
    });
    return this.#listener;
  }

  /** Closes every subscription and the connections fw opened. */
  async close(): Promise<void> {
    if (!this.#redis.refuse()) return;
    const all = [...this.#channels.values()].flatMap((c) => [...c.subscriptions]);
    await Promise.all(all.map((s) => s.close()));
    await this.#redis.close();
  }
}

/**
 * Creates the Redis pub/sub realtime broker: live fan-out across every process on the same Redis,
 * with nothing retained (`capabilities.replay` is false). One connection publishes; one more,
 * opened on the first subscription, carries every subscribed channel and fans out locally.
 *
 * After a lost connection the client subscribes again by itself; what was published meanwhile is
 * lost, and every subscription gets `onGap({ reason: "disconnected" })`.
 *
 * @param options `url` or `client` (with `subscribe()`/`unsubscribe()`), `keyPrefix`, `logger`.
 * @returns The broker (connected on first use or by `start()`).
 * @throws {TypeError} For a missing or doubled `url`/`client`, a client without pub/sub methods,
 * or an empty `keyPrefix`.
 *
 * @example
 * ```ts ignore
 * import { kvPubSub } from "@fw/events/kvstore";
 * const broker = kvPubSub({ url: "redis://127.0.0.1:6379", keyPrefix: "app:live:" });
 * await broker.subscribe("prices", (m) => console.log(m.id, m.payload));
 * await broker.publish("prices", { eur: 1.08 });
 * await broker.close();
 * ```
 */
export function kvPubSub(options: KvPubSubOptions): KvPubSub {
  return new KvPubSub(options);
}
