/**
 * The one module of `@fw/events` that imports the npm `redis` client (node-redis v5). Every Redis
 * transport and realtime broker talks to Redis through the small structural {@linkcode RedisClient}
 * interface below, so a user may pass any compatible client (a node-redis v5 client satisfies it
 * as is; ioredis through a three-line adapter over `call()`), and this file is the only place that
 * knows how to create one from a URL.
 *
 * @module
 */

import { checkConnectionSource } from "./_connection_source.ts";
import { clusterDefaults, ClusterRedis } from "./_redis_cluster.ts";
import type { RedisClient, RedisClusterClient } from "./_redis_types.ts";

export type { RedisClient, RedisClusterClient, RedisPubSubListener } from "./_redis_types.ts";

/**
 * Where a Redis-backed transport or broker gets its connection: a URL (or the node URLs of a
 * Redis Cluster), or a client of yours.
 */
export interface RedisSource {
  /**
   * A Redis URL such as `redis://127.0.0.1:6379`: fw creates, connects and closes the client. A
   * list of URLs (`["redis://10.0.0.1:7000", "redis://10.0.0.2:7000"]`, one or more nodes of the
   * cluster) means a Redis Cluster: fw creates a node-redis cluster client that learns the other
   * nodes from them. A single URL of a cluster node works too: fw sees the server is in cluster
   * mode (`INFO cluster`) and uses a cluster client.
   */
  readonly url?: string | readonly string[];
  /**
   * A connected client (yours to close); fw only `duplicate()`s it for blocking readers. A
   * node-redis cluster client (`createCluster()`) is accepted too.
   */
  readonly client?: RedisClient | RedisClusterClient;
}

/** Ready connections for one transport or broker. */
export interface RedisConnections {
  /**
   * True on a Redis Cluster: a command may only touch keys of one hash slot, so readers of
   * several keys read each slot's keys on a connection of their own.
   */
  readonly cluster: boolean;
  /** The shared connection for non-blocking commands (publishing, acks, bookkeeping). */
  readonly main: RedisClient;
  /**
   * Opens a dedicated connection (for a blocking reader or pub/sub). Closed by
   * {@linkcode RedisConnections.close}, or earlier by its own `close()`.
   */
  dedicated(): Promise<RedisClient>;
  /**
   * Closes every dedicated connection and, when fw created it, the main one, in bounded time (see
   * {@linkcode closeRedisClient}).
   */
  close(): Promise<void>;
}

/** Redacts the password of a Redis URL (or of each node URL of a cluster) for messages. */
export function redactRedisUrl(url: string | readonly string[]): string {
  if (typeof url !== "string") return url.map(redactRedisUrl).join(", ");
  try {
    const parsed = new URL(url);
    if (parsed.password) parsed.password = "***";
    return parsed.toString();
  } catch {
    return url;
  }
}

/**
 * Checks a {@linkcode RedisSource} given to `owner` (for error messages): exactly one of `url` and
 * `client`, a URL that parses with a `redis:` or `rediss:` scheme, a client with the needed methods.
 *
 * @throws {TypeError} Naming the option that is wrong.
 */
export function checkRedisSource(owner: string, source: RedisSource): void {
  const url = source?.url;
  const rules = {
    schemes: ["redis:", "rediss:"],
    expected: "a redis:// or rediss:// URL",
    describeUrl: (url: string) => `"${redactRedisUrl(url)}"`,
    product: "Redis",
    methods: ["sendCommand", "duplicate", "connect", "close", "on"],
  };
  if (Array.isArray(url)) {
    if (url.length === 0) {
      throw new TypeError(
        `Invalid ${owner} option "url": expected a URL or a non-empty list of cluster node URLs`,
      );
    }
    if (source.client !== undefined) {
      throw new TypeError(`Invalid ${owner} options: give either "url" or "client"`);
    }
    for (const one of url) checkConnectionSource(owner, { url: String(one) }, rules);
    return;
  }
  checkConnectionSource(owner, source as { url?: string; client?: unknown }, rules);
}

/** True for a node-redis cluster client (it has `masters` and a three-argument `sendCommand`). */
export function isClusterClient(client: unknown): client is RedisClusterClient {
  return typeof client === "object" && client !== null &&
    typeof (client as { getSlotRandomNode?: unknown }).getSlotRandomNode === "function" &&
    typeof (client as { nodeClient?: unknown }).nodeClient === "function";
}

/** How long closing a connection waits for the replies still pending before dropping it. */
const CLOSE_GRACE_MS = 2_000;

/**
 * Closes one connection in bounded time. A connection that is up gets up to `graceMs` for its
 * pending replies; one that is down or reconnecting (node-redis' `close()` would wait without end
 * for replies to commands in its offline queue, and stops reconnecting) or too slow is destroyed,
 * which fails its waiting commands.
 *
 * @param client The connection.
 * @param graceMs How long to wait for pending replies.
 */
export async function closeRedisClient(
  client: RedisClient,
  graceMs: number = CLOSE_GRACE_MS,
): Promise<void> {
  const destroy = () => {
    try {
      client.destroy?.();
    } catch {
      // already closed
    }
  };
  if (client.isReady === false && typeof client.destroy === "function") {
    destroy();
    return;
  }
  let timer: ReturnType<typeof setTimeout> | undefined;
  const closed = await Promise.race([
    Promise.resolve().then(() => client.close()).then(() => true, () => true),
    new Promise<boolean>((resolve) => timer = setTimeout(() => resolve(false), graceMs)),
  ]);
  clearTimeout(timer);
  if (!closed) destroy();
}

/** Whether the server is a Redis Cluster node (`INFO cluster`); false when it cannot tell. */
async function inClusterMode(client: RedisClient): Promise<boolean> {
  try {
    return /cluster_enabled:1/.test(String(await client.sendCommand(["INFO", "cluster"])));
  } catch {
    return false;
  }
}

async function connectOrExplain(client: RedisClient, owner: string, where: string): Promise<void> {
  try {
    await client.connect();
  } catch (error) {
    await Promise.resolve(client.close()).catch(() => {});
    throw new Error(
      `${owner} cannot connect to Redis at ${where}: ${(error as Error)?.message ?? error}`,
      { cause: error },
    );
  }
}

/**
 * Opens the connections of one transport or broker. With `url`, creates a node-redis client that
 * fails fast on the first connection (start-up names the address) and, once connected, reconnects
 * in the background with capped exponential back-off (50 ms doubling up to 2 s). Commands sent
 * while it is down wait in node-redis' offline queue and are sent after the reconnect; the caller
 * decides how long to wait for them.
 *
 * @param owner Name for messages, such as `kvStreamTransport()`.
 * @param source The URL or the client.
 * @throws {Error} When the first connection fails: `<owner> cannot connect to Redis at <url>: ...`.
 */
export async function openRedis(owner: string, source: RedisSource): Promise<RedisConnections> {
  checkRedisSource(owner, source);
  const where = source.url !== undefined ? redactRedisUrl(source.url) : "the given client";
  let main: RedisClient;
  const owned: RedisClient[] = [];
  const openCluster = async (urls: readonly string[]): Promise<RedisClient> => {
    const { createCluster } = await import("redis");
    const cluster = createCluster({
      rootNodes: urls.map((url) => ({ url })),
      // credentials for the nodes it discovers; node connections give up soon, so that a command
      // to a master that died fails and is retried once a replica took over (`_redis_cluster.ts`)
      defaults: clusterDefaults(urls),
    }) as unknown as RedisClusterClient;
    const client = new ClusterRedis(cluster, true);
    client.on("error", () => {});
    await connectOrExplain(client, owner, where);
    return client;
  };
  if (typeof source.url === "string") {
    const { createClient } = await import("redis");
    let connected = false;
    main = createClient({
      url: source.url,
      socket: {
        connectTimeout: 5_000,
        reconnectStrategy: (retries: number, cause: Error) =>
          connected ? Math.min(50 * 2 ** retries, 2_000) : cause,
      },
    }) as unknown as RedisClient;
    main.on("error", () => {}); // surfaced through the failing commands
    await connectOrExplain(main, owner, where);
    connected = true;
    if (await inClusterMode(main)) {
      // One node of a Redis Cluster given as a single URL: a cluster client learns the others.
      await closeRedisClient(main);
      main = await openCluster([source.url]);
    }
    owned.push(main);
  } else if (source.url !== undefined) {
    main = await openCluster(source.url);
    owned.push(main);
  } else if (isClusterClient(source.client)) {
    main = new ClusterRedis(source.client, false);
    main.on("error", () => {});
    owned.push(main); // closes only the cluster clients it created itself
  } else {
    main = source.client as RedisClient;
  }
  const dedicated = new Set<RedisClient>();
  return {
    cluster: main instanceof ClusterRedis,
    main,
    async dedicated(): Promise<RedisClient> {
      const client = main.duplicate();
      client.on("error", () => {});
      await connectOrExplain(client, owner, where);
      dedicated.add(client);
      return client;
    },
    async close(): Promise<void> {
      const all = [...dedicated, ...owned];
      dedicated.clear();
      owned.length = 0;
      await Promise.all(all.map((c) => closeRedisClient(c)));
    },
  };
}
