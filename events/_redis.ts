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

/** Where a Redis-backed transport or broker gets its connection: a URL, or a client of yours. */
export interface RedisSource {
  /** A Redis URL such as `redis://127.0.0.1:6379`: fw creates, connects and closes the client. */
  readonly url?: string;
  /** A connected client (yours to close); fw only `duplicate()`s it for blocking readers. */
  readonly client?: RedisClient;
}

/** Ready connections for one transport or broker. */
export interface RedisConnections {
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

/** Redacts the password of a Redis URL for messages. */
export function redactRedisUrl(url: string): string {
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
  checkConnectionSource(owner, source, {
    schemes: ["redis:", "rediss:"],
    expected: "a redis:// or rediss:// URL",
    describeUrl: (url) => `"${redactRedisUrl(url)}"`,
    product: "Redis",
    methods: ["sendCommand", "duplicate", "connect", "close", "on"],
  });
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
  if (source.url !== undefined) {
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
    owned.push(main);
  } else {
    main = source.client!;
  }
  const dedicated = new Set<RedisClient>();
  return {
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
