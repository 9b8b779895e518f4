/**
 * Internal to `@fw/events`: the structural Redis client types (re-exported by `_redis.ts`), in a
 * file of their own so that `_redis_cluster.ts` can use them without importing `_redis.ts`.
 *
 * @module
 */

/** A listener of a Redis pub/sub channel: the message text and the channel it came on. */
export type RedisPubSubListener = (message: string, channel: string) => void;

/**
 * What fw needs from a Redis client. A node-redis v5 client (`createClient()` from npm `redis`)
 * has every member.
 *
 * - `sendCommand(["XADD", key, "*", "f", "v"])` sends one command and resolves to its raw RESP2
 *   reply (strings, numbers, arrays, `null`).
 * - `duplicate()` gives a new, not yet connected client with the same options: fw opens one per
 *   blocking reader (`XREADGROUP ... BLOCK`) and one for pub/sub, and never blocks the connection it
 *   publishes on.
 * - `subscribe` / `unsubscribe` are used only on such a duplicate, for live-only pub/sub.
 */
export interface RedisClient {
  /** Sends one command given as its arguments; resolves to the raw reply. */
  sendCommand(args: string[]): Promise<unknown>;
  /** A new client with the same connection options, not connected yet. */
  duplicate(): RedisClient;
  /** Opens the connection. */
  connect(): Promise<unknown>;
  /** Closes the connection once pending replies have arrived. */
  close(): Promise<void>;
  /**
   * Drops the connection now, failing the commands still waiting (node-redis has it). Used when
   * `close()` cannot finish: a connection that is down or reconnecting never gets its replies.
   */
  destroy?(): unknown;
  /** Whether the connection is up and usable now (node-redis has it). */
  readonly isReady?: boolean;
  /** Listens to connection events (`error`, `ready`, `reconnecting`, `end`). */
  on(event: string, listener: (...args: unknown[]) => void): unknown;
  /** Subscribes this connection to a pub/sub channel. */
  subscribe?(channel: string, listener: RedisPubSubListener): Promise<unknown>;
  /** Unsubscribes this connection from a pub/sub channel. */
  unsubscribe?(channel: string): Promise<unknown>;
}

/**
 * What fw needs from a node-redis v5 cluster client (`createCluster()` from npm `redis`): it
 * sends each command to the master of the command's first key, and follows `MOVED`.
 */
export interface RedisClusterClient {
  /** Sends one command to the node serving `firstKey` (a random node when `undefined`). */
  sendCommand(
    firstKey: string | undefined,
    isReadonly: boolean | undefined,
    args: string[],
  ): Promise<unknown>;
  /** A new cluster client with the same options (and `overrides`), not connected yet. */
  duplicate(overrides?: Record<string, unknown>): RedisClusterClient;
  /** Connects to the cluster (discovers its nodes). */
  connect(): Promise<unknown>;
  /** Closes every node connection once pending replies have arrived. */
  close(): Promise<void>;
  /** Drops every node connection now. */
  destroy(): unknown;
  /** Listens to cluster events. */
  on(event: string, listener: (...args: unknown[]) => void): unknown;
  /** The cluster's masters (node-redis has it; fw uses it to tell a cluster client apart). */
  readonly masters: readonly unknown[];
  /** Subscribes to a pub/sub channel. */
  subscribe?(channel: string, listener: RedisPubSubListener): Promise<unknown>;
  /** Unsubscribes from a pub/sub channel. */
  unsubscribe?(channel: string): Promise<unknown>;
  /** Subscribes to a sharded pub/sub channel (`SSUBSCRIBE`, on the shard of the channel). */
  sSubscribe?(channel: string, listener: RedisPubSubListener): Promise<unknown>;
  /** Unsubscribes from a sharded pub/sub channel. */
  sUnsubscribe?(channel: string): Promise<unknown>;
}
