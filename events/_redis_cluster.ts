/**
 * Internal to `@fw/events`: a Redis Cluster seen through the one-argument
 * {@linkcode RedisClient} interface that the Redis transport and brokers use. A node-redis
 * cluster client needs the command's first key to pick the node; {@linkcode commandKey} finds it
 * in the arguments for every command fw sends (the key of a script, of a stream read, of an
 * `XGROUP`/`XINFO` subcommand, else the first argument).
 *
 * A failover: node-redis follows `MOVED`, but a master that died leaves its connection
 * reconnecting and its slots pointing at it until a replica is promoted. fw creates its cluster
 * clients with a reconnect strategy that gives up after a few tries, so commands to a dead node
 * fail soon; {@linkcode ClusterRedis} then retries them (for up to `FAILOVER_WAIT_MS`) on a fresh
 * cluster client that learns the new topology from the nodes still up. A command retried this way
 * may have run once already (a publish may be added twice: at-least-once, like every transport).
 *
 * @module
 */

import type { RedisClient, RedisClusterClient, RedisPubSubListener } from "./_redis_types.ts";

/** How long a command keeps being retried while the cluster has no master for its slot. */
export const FAILOVER_WAIT_MS = 30_000;

/** Commands whose first argument is not a key (sent to any node). */
const KEYLESS = new Set([
  "PING",
  "CLIENT",
  "TIME",
  "INFO",
  "CLUSTER",
  "SCAN",
  "PUBLISH",
  "SCRIPT",
  "DBSIZE",
  "FLUSHDB",
  "FLUSHALL",
  "WAIT",
  "ECHO",
]);

/**
 * The key that decides which node serves a command, or `undefined` for a command any node
 * serves.
 *
 * @param args The command and its arguments.
 */
export function commandKey(args: readonly string[]): string | undefined {
  const name = String(args[0]).toUpperCase();
  switch (name) {
    case "EVAL":
    case "EVALSHA":
    case "EVAL_RO":
    case "EVALSHA_RO":
    case "FCALL":
      return Number(args[2]) > 0 ? args[3] : undefined;
    case "XREAD":
    case "XREADGROUP": {
      const i = args.findIndex((a) => String(a).toUpperCase() === "STREAMS");
      return i >= 0 ? args[i + 1] : undefined;
    }
    case "XGROUP":
    case "XINFO":
    case "OBJECT":
      return args[2];
  }
  return KEYLESS.has(name) ? undefined : args[1];
}

/** CRC16/XMODEM, the checksum Redis Cluster hashes keys with. */
function crc16(bytes: Uint8Array): number {
  let crc = 0;
  for (const byte of bytes) {
    crc ^= byte << 8;
    for (let i = 0; i < 8; i++) {
      crc = crc & 0x8000 ? ((crc << 1) ^ 0x1021) & 0xffff : (crc << 1) & 0xffff;
    }
  }
  return crc;
}

/**
 * The Redis Cluster hash slot of a key (0 to 16383): of its hash tag, the part between the
 * first `{` and the next `}` when that part is not empty, else of the whole key.
 */
export function keySlot(key: string): number {
  const open = key.indexOf("{");
  if (open >= 0) {
    const close = key.indexOf("}", open + 1);
    if (close > open + 1) key = key.slice(open + 1, close);
  }
  return crc16(new TextEncoder().encode(key)) % 16384;
}

/** Errors that say the node or the slot's master is gone, not that the command was wrong. */
function isNodeFailure(error: unknown): boolean {
  if (!(error instanceof Error)) return false;
  const kind = error.constructor?.name;
  if (kind === "ErrorReply" || kind === "SimpleError" || kind === "BlobError") {
    return /^(CLUSTERDOWN|TRYAGAIN|MASTERDOWN|LOADING|READONLY)\b/.test(error.message);
  }
  return true;
}

/** Bounded reconnects for the node connections of a cluster client fw creates. */
export function nodeReconnectStrategy(retries: number, cause: Error): number | Error {
  return retries >= 4 ? cause : 50 * 2 ** retries;
}

/** Options every node connection of a cluster client gets (node-redis' `defaults`). */
export interface ClusterDefaults {
  readonly username?: string;
  readonly password?: string;
  readonly socket?: Readonly<Record<string, unknown>>;
  readonly [option: string]: unknown;
}

/**
 * Node options for a cluster reached at these URLs: the credentials and TLS of the first URL
 * (the nodes it discovers need them too), and bounded reconnects.
 */
export function clusterDefaults(urls: readonly string[]): ClusterDefaults {
  const u = new URL(urls[0]);
  return {
    ...(u.username ? { username: decodeURIComponent(u.username) } : {}),
    ...(u.password ? { password: decodeURIComponent(u.password) } : {}),
    socket: {
      connectTimeout: 5_000,
      reconnectStrategy: nodeReconnectStrategy,
      ...(u.protocol === "rediss:" ? { tls: true } : {}),
    },
  };
}

/** The `defaults` of a node-redis cluster client (kept by node-redis in its options). */
function defaultsOf(cluster: RedisClusterClient): ClusterDefaults {
  const options = (cluster as unknown as { _options?: { defaults?: ClusterDefaults } })._options;
  return options?.defaults ?? {};
}

/** `defaults` with bounded reconnects and the given connect timeout. */
function bounded(defaults: ClusterDefaults, connectTimeout: number): ClusterDefaults {
  return {
    ...defaults,
    socket: { ...defaults.socket, connectTimeout, reconnectStrategy: nodeReconnectStrategy },
  };
}

/** A node-redis cluster client behind the {@linkcode RedisClient} interface. */
export class ClusterRedis implements RedisClient {
  #cluster: RedisClusterClient;
  /** Cluster clients this adapter created (closed with it); the user's is not among them. */
  readonly #owned: Set<RedisClusterClient>;
  readonly #listeners: [string, (...args: unknown[]) => void][] = [];
  #refreshing: Promise<void> | undefined;
  #closed = false;

  /**
   * @param cluster The cluster client.
   * @param owned Whether this adapter closes it.
   */
  constructor(cluster: RedisClusterClient, owned: boolean) {
    this.#cluster = cluster;
    this.#owned = new Set(owned ? [cluster] : []);
  }

  /** Sends a command to the master of its first key ({@linkcode commandKey}). */
  sendCommand(args: string[]): Promise<unknown> {
    return this.sendAt(commandKey(args), args);
  }

  /**
   * Sends a command to the master serving `key` (`CLIENT ID` for the connection that reads a
   * key's stream, for example), retrying on a fresh cluster client while the slot has no master.
   */
  async sendAt(key: string | undefined, args: string[]): Promise<unknown> {
    const end = Date.now() + FAILOVER_WAIT_MS;
    for (let attempt = 0;; attempt++) {
      const cluster = this.#cluster;
      try {
        return await cluster.sendCommand(key, false, args);
      } catch (error) {
        if (this.#closed || !isNodeFailure(error) || Date.now() > end) throw error;
        await new Promise((r) => setTimeout(r, Math.min(50 * 2 ** attempt, 500)));
        if (this.#closed) throw error;
        await this.#refresh(cluster).catch(() => {});
      }
    }
  }

  /** Replaces `seen` by a new cluster client (once, however many commands failed on it). */
  #refresh(seen: RedisClusterClient): Promise<void> {
    if (this.#cluster !== seen) return Promise.resolve();
    return this.#refreshing ??= (async () => {
      const next = seen.duplicate({ defaults: bounded(defaultsOf(seen), 2_000) });
      for (const [event, listener] of this.#listeners) next.on(event, listener);
      next.on("error", () => {});
      try {
        await next.connect();
      } catch (error) {
        next.destroy();
        throw error;
      }
      if (this.#closed) {
        next.destroy();
        return;
      }
      this.#owned.add(next);
      this.#cluster = next;
      if (this.#owned.delete(seen)) {
        // Replies still pending on live nodes get their time; the dead node's are dropped.
        const closing = Promise.race([
          seen.close().catch(() => {}),
          new Promise((r) => setTimeout(r, 2_000)),
        ]);
        void closing.then(() => seen.destroy());
      }
    })().finally(() => this.#refreshing = undefined);
  }

  /** A new adapter over a duplicate cluster client that connects only to the nodes it uses. */
  duplicate(): RedisClient {
    return new ClusterRedis(
      this.#cluster.duplicate({
        minimizeConnections: true,
        defaults: bounded(defaultsOf(this.#cluster), 5_000),
      }),
      true,
    );
  }

  /** Connects the cluster client (discovers the nodes). */
  async connect(): Promise<unknown> {
    return await this.#cluster.connect();
  }

  /** Closes the cluster clients this adapter created. */
  async close(): Promise<void> {
    this.#closed = true;
    const owned = [...this.#owned];
    this.#owned.clear();
    await Promise.all(owned.map((c) => c.close().catch(() => {})));
  }

  /** Drops the connections of the cluster clients this adapter created. */
  destroy(): void {
    this.#closed = true;
    for (const c of this.#owned) {
      try {
        c.destroy();
      } catch {
        // already closed
      }
    }
    this.#owned.clear();
  }

  /**
   * Listens to cluster events (on later cluster clients too). `reconnecting` and `ready` come
   * from this adapter: a node of a subscribing client failed, and its channels were subscribed
   * again on a fresh cluster client.
   */
  on(event: string, listener: (...args: unknown[]) => void): unknown {
    if (event === "reconnecting" || event === "ready" || event === "end") {
      this.#own.push([event, listener]);
      return this;
    }
    this.#listeners.push([event, listener]);
    return this.#cluster.on(event, listener);
  }

  readonly #own: [string, (...args: unknown[]) => void][] = [];
  readonly #channels = new Map<string, RedisPubSubListener>();
  #resubscribing: Promise<void> | undefined;

  #emit(event: string): void {
    for (const [name, listener] of this.#own) {
      if (name !== event) continue;
      try {
        listener();
      } catch {
        // a listener's own failure
      }
    }
  }

  /**
   * Subscribes to a sharded pub/sub channel (`SSUBSCRIBE`, on the shard that serves the channel's
   * slot): publish with `SPUBLISH`. When a node of this client fails (a master that died, before
   * or after its replica took over), every channel is subscribed again on a fresh cluster client
   * (`reconnecting`, then `ready` once done): what was published in between is missed.
   */
  async subscribe(channel: string, listener: RedisPubSubListener): Promise<unknown> {
    if (this.#channels.size === 0 && !this.#watching) {
      this.#watching = true;
      this.#watch(this.#cluster);
    }
    this.#channels.set(channel, listener);
    return await this.#cluster.sSubscribe!(channel, listener);
  }
  #watching = false;

  #watch(cluster: RedisClusterClient): void {
    cluster.on("node-error", () => {
      if (this.#cluster === cluster) void this.#resubscribe(cluster);
    });
  }

  /** Moves every channel to a fresh cluster client, retrying until it works or this closes. */
  #resubscribe(seen: RedisClusterClient): Promise<void> {
    return this.#resubscribing ??= (async () => {
      this.#emit("reconnecting");
      for (let attempt = 0; !this.#closed; attempt++) {
        await new Promise((r) => setTimeout(r, Math.min(100 * 2 ** attempt, 1_000)));
        if (this.#closed) return;
        try {
          await this.#refresh(seen);
          const next = this.#cluster;
          if (next === seen) continue;
          for (const [channel, listener] of this.#channels) {
            await next.sSubscribe!(channel, listener);
          }
          this.#watch(next);
          this.#emit("ready");
          return;
        } catch {
          seen = this.#cluster; // that one failed too: replace it on the next round
        }
      }
    })().finally(() => this.#resubscribing = undefined);
  }

  /** Unsubscribes from a sharded pub/sub channel. */
  unsubscribe(channel: string): Promise<unknown> {
    this.#channels.delete(channel);
    return this.#cluster.sUnsubscribe!(channel);
  }
}

/**
 * Sends a command on the connection that serves `key`: on a cluster, to that key's master; on a
 * single Redis, as it is.
 */
export function sendCommandAt(
  client: RedisClient,
  key: string,
  args: string[],
): Promise<unknown> {
  return client instanceof ClusterRedis ? client.sendAt(key, args) : client.sendCommand(args);
}
