/**
 * The blocking reader of a `kvStream` broker: a dedicated Redis connection running `XREAD BLOCK`
 * over every subscribed topic's stream at once, fanning each entry out to the local subscriptions
 * of its topic. On a single Redis one reader reads every topic; on a Redis Cluster, where one
 * command may only touch keys of one hash slot, the broker runs a reader per slot in use.
 *
 * - Each topic has a cursor, the last id read; the next `XREAD` asks for what comes after it, so a
 *   lost connection resumes where it stopped and replays what was published meanwhile.
 * - A change of topics interrupts the blocked read with `CLIENT UNBLOCK` from the main connection.
 * - Missed entries: a publisher trims to `maxLen` and the stream always keeps at least `maxLen`
 *   entries, so a read that returns fewer than `maxLen` entries after the cursor missed nothing.
 *   A read that returns more is checked against the stream's first entry; if the cursor is older,
 *   the subscribers get `onGap` (`"disconnected"` after a lost connection, else `"trimmed"`).
 *
 * @module
 */

import type { Logger } from "@fw/runtime";
import type { RedisClient, RedisConnections } from "../_redis.ts";
import { sendCommandAt } from "../_redis_cluster.ts";
import type { RealtimeGap, RealtimeMessage } from "./realtime.ts";
import type { KvSubscription } from "./_kv_subscriber.ts";
import { compareStreamIds, formatStreamId, type StreamId, streamId } from "./_kv_common.ts";
import { readStreamInfo } from "./_stream_info.ts";

/** One topic the reader follows. */
export interface ReaderTopic {
  readonly topic: string;
  readonly key: string;
  /** The last id read (`undefined` until the first subscription has looked at the stream). */
  cursor: StreamId | undefined;
  readonly subscriptions: Set<KvSubscription>;
  /**
   * The reader's loss count when its last read that covered this topic was sent: a count below
   * the reader's means the connection was lost since, and a gap then found is "disconnected".
   */
  losses: number;
}

/** Settings of a {@linkcode StreamReader}. */
export interface StreamReaderOptions {
  /** Entries per topic per read. */
  readonly count: number;
  /** How long one `XREAD` blocks, in ms. */
  readonly blockMs: number;
  /** The broker's `maxLen`: reads of fewer entries cannot have missed any. */
  readonly maxLen: number;
  /** The reader connection's `CLIENT SETNAME`. */
  readonly name: string;
  /**
   * On a Redis Cluster, a key of the one hash slot this reader reads: connection commands
   * (`CLIENT ID`, `CLIENT UNBLOCK`) go to the node that serves it.
   */
  readonly routeKey?: string;
  readonly logger?: Logger;
}

type Entry = [id: string, fields: string[]];

const delay = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Reads every subscribed stream on one connection; created on the first subscription. */
export class StreamReader {
  readonly topics: Map<string, ReaderTopic> = new Map();
  #client: RedisClient | undefined;
  #clientId: string | undefined;
  /** How many times the reader's connection was lost (compared with each topic's `losses`). */
  #losses = 0;
  #loop: Promise<void> | undefined;
  #closed = false;
  /** Bumped on every change of the followed topics. */
  #version = 0;
  /** The version of the topic list the pending read was built from. */
  #readVersion = -1;
  #blocked = false;
  #kicking = false;
  #idle: (() => void) | undefined;

  constructor(readonly redis: RedisConnections, readonly options: StreamReaderOptions) {}

  /** The topic entry for `key`, created (without a cursor) when missing. */
  topic(topic: string, key: string): ReaderTopic {
    let state = this.topics.get(key);
    if (!state) {
      state = { topic, key, cursor: undefined, subscriptions: new Set(), losses: this.#losses };
      this.topics.set(key, state);
    }
    return state;
  }

  /** Starts following `state` from `cursor` (when it has no cursor yet). */
  follow(state: ReaderTopic, cursor: StreamId): void {
    if (state.cursor || this.topics.get(state.key) !== state) return;
    state.cursor = cursor;
    this.#changed();
  }

  /** Removes a subscription; a topic with none left is no longer read. */
  leave(state: ReaderTopic, subscription: KvSubscription): void {
    state.subscriptions.delete(subscription);
    if (state.subscriptions.size === 0 && this.topics.get(state.key) === state) {
      this.topics.delete(state.key);
      this.#version++; // picked up at the next read; no need to interrupt this one
    }
  }

  #changed(): void {
    this.#version++;
    if (this.#closed) return;
    this.#loop ??= this.#run();
    if (this.#idle) {
      this.#idle();
      this.#idle = undefined;
    } else void this.#kick();
  }

  /** Interrupts a blocked read built from an older topic list (retrying until it lands). */
  async #kick(): Promise<void> {
    if (this.#kicking) return;
    this.#kicking = true;
    try {
      for (let i = 0; i < 400; i++) {
        if (!this.#blocked || this.#readVersion >= this.#version) return;
        const id = this.#clientId;
        if (id !== undefined) {
          const unblocked = await this.#send(this.redis.main, ["CLIENT", "UNBLOCK", id])
            .catch(() => 0);
          if (unblocked === 1) return;
        }
        await delay(5); // the read has not reached Redis yet, or the connection is coming back
      }
    } finally {
      this.#kicking = false;
    }
  }

  async #connect(): Promise<RedisClient> {
    if (this.#client === undefined) {
      const client = this.#client = await this.redis.dedicated();
      // A connection lost between two reads comes back on its own (node-redis reconnects; on a
      // cluster, a node's connection, or a fresh cluster client after its node errors) and no
      // command fails: the reader still counts the loss (a gap then found is "disconnected", not
      // "trimmed") and names the new connection again.
      const lost = () => this.#lost();
      for (const event of ["error", "end", "reconnecting", "node-error", "node-reconnecting"]) {
        client.on(event, lost);
      }
    }
    const client = this.#client;
    if (this.#clientId === undefined) {
      const losses = this.#losses;
      await this.#send(client, ["CLIENT", "SETNAME", this.options.name]);
      const id = String(await this.#send(client, ["CLIENT", "ID"]));
      // (lost in between: the id may be the new, unnamed connection's; name it next time)
      if (this.#losses === losses) this.#clientId = id;
    }
    return client;
  }

  /** The reader's connection was lost: its id is gone and every topic may have missed entries. */
  #lost(): void {
    this.#losses++;
    this.#clientId = undefined;
  }

  /** A connection command, on a cluster to the node of this reader's slot. */
  #send(client: RedisClient, args: string[]): Promise<unknown> {
    const key = this.options.routeKey;
    return key === undefined ? client.sendCommand(args) : sendCommandAt(client, key, args);
  }

  async #run(): Promise<void> {
    let failures = 0;
    while (!this.#closed) {
      const active = [...this.topics.values()].filter((t) => t.cursor);
      this.#readVersion = this.#version;
      if (!active.length) {
        await new Promise<void>((resolve) => this.#idle = resolve);
        continue;
      }
      let reply: unknown;
      let losses = 0;
      try {
        const client = await this.#connect();
        if (this.#closed) break;
        this.#blocked = true;
        losses = this.#losses;
        reply = await client.sendCommand([
          "XREAD",
          "COUNT",
          String(this.options.count),
          "BLOCK",
          String(this.options.blockMs),
          "STREAMS",
          ...active.map((t) => t.key),
          ...active.map((t) => formatStreamId(t.cursor!)),
        ]);
        failures = 0;
      } catch (error) {
        if (this.#closed) break;
        this.#lost(); // a new connection has a new id (and no name)
        if (failures++ === 0) {
          this.options.logger?.warn("kvStream reader lost its Redis connection", { error });
        }
        await delay(Math.min(50 * 2 ** failures, 2_000));
        continue;
      } finally {
        this.#blocked = false;
      }
      await this.#fanOut(active, reply as [string, Entry[]][] | null, losses);
    }
  }

  /**
   * Hands a read's entries to the subscribers; `losses` is the loss count when the read was sent,
   * which its topics then remember (a loss since leaves them behind the reader's count).
   */
  async #fanOut(
    read: ReaderTopic[],
    reply: [string, Entry[]][] | null,
    losses: number,
  ): Promise<void> {
    for (const [key, entries] of reply ?? []) {
      const state = this.topics.get(key);
      if (!state || !state.cursor || !entries.length) continue;
      if (entries.length >= Math.min(this.options.maxLen, this.options.count)) {
        await this.#checkWindow(state);
      }
      for (const [id, fields] of entries) {
        const order = streamId(id);
        state.cursor = order;
        const message = toMessage(state.topic, id, fields, this.options.logger);
        if (!message) continue;
        for (const subscription of state.subscriptions) subscription.offer(message, order);
      }
    }
    for (const state of read) state.losses = losses;
  }

  /** After a long read: reports a gap when the cursor is older than the stream's first entry. */
  async #checkWindow(state: ReaderTopic): Promise<void> {
    const info = await readStreamInfo(this.redis.main, state.key).catch(() => undefined);
    if (!info?.first || !info.trimmed || compareStreamIds(state.cursor!, info.first) >= 0) return;
    const reason: RealtimeGap["reason"] = state.losses !== this.#losses
      ? "disconnected"
      : "trimmed";
    for (const subscription of state.subscriptions) subscription.gap(reason);
  }

  /** Stops reading; resolves once the loop has ended. */
  async close(): Promise<void> {
    this.#closed = true;
    this.#version++;
    this.#idle?.();
    await this.#kick();
    await this.#loop;
  }
}

/**
 * A realtime message from a stream entry (field `p` holds the JSON payload); `undefined`, logged,
 * for an entry fw did not write.
 */
export function toMessage(
  topic: string,
  id: string,
  fields: string[],
  logger: Logger | undefined,
): RealtimeMessage | undefined {
  const at = fields.indexOf("p");
  try {
    if (at % 2 !== 0) throw new Error('no field "p"');
    return Object.freeze({ id, topic, payload: JSON.parse(fields[at + 1]) });
  } catch (error) {
    logger?.warn("kvStream skipped a stream entry it cannot read", { topic, id, error });
    return undefined;
  }
}
