/**
 * `@fw/application/redis-rate-limit`: a {@linkcode RateLimitStore} in Redis, so several instances
 * of an app share one limit. Kept out of the main entry: importing `@fw/application` never loads
 * `npm:redis`.
 *
 * Each hit is one Lua script (atomic in Redis): `INCR` the key, give it a `PEXPIRE` of the window
 * when it has none, and return the count with the `PTTL` left. The window is Redis's, so every
 * instance sees the same reset time.
 *
 * The store talks to Redis through {@linkcode RedisScriptClient}, a small structural interface
 * that a node-redis v5 client satisfies; other clients can be adapted in a few lines. Given a
 * `url`, the store creates (with `npm:redis`, this module being the one that imports it),
 * connects and, on `close()`, closes its own client.
 *
 * While Redis cannot be reached the store fails closed by default: the limited route answers 500
 * (the error is logged) rather than letting unlimited traffic through. With `failOpen: true` it
 * lets requests through uncounted instead (the error is still reported, through `onError`). A
 * lost connection is retried in the background; once Redis is back, counting resumes (with the
 * counts Redis kept, if it persists them).
 *
 * @example
 * ```ts ignore
 * import { endpoint } from "@fw/application";
 * import { redisRateLimitStore } from "@fw/application/redis-rate-limit";
 *
 * const store = redisRateLimitStore({ url: "redis://127.0.0.1:6379" });
 * export const POST = endpoint()
 *   .rateLimit({ max: 5, windowMs: 60_000, store })
 *   .handle(() => ({ ok: true }));
 * // after app.stop(): await store.close();
 * ```
 *
 * @module
 */

import type { RateLimitHit, RateLimitStore } from "./rate_limit_store.ts";

/** Keys and arguments of a script call (node-redis v5 `eval` options). */
export interface RedisScriptOptions {
  /** The keys the script touches. */
  keys: string[];
  /** The script's arguments. */
  arguments: string[];
}

/** What the store needs from a Redis client (a node-redis v5 client has it). */
export interface RedisScriptClient {
  /** `EVAL script numkeys keys... args...`. */
  eval(script: string, options: RedisScriptOptions): Promise<unknown>;
  /** `EVALSHA`; used when present, with `eval` as the fallback on `NOSCRIPT`. */
  evalSha?(sha1: string, options: RedisScriptOptions): Promise<unknown>;
}

/** Options of {@linkcode redisRateLimitStore}: a client, or a URL to create one from. */
export interface RedisRateLimitStoreOptions {
  /** A connected client (yours to close). */
  readonly client?: RedisScriptClient;
  /**
   * A Redis URL such as `redis://127.0.0.1:6379`: the store creates and owns a client. A list of
   * node URLs means a Redis Cluster (a node-redis cluster client; each counter is one key, so it
   * lives on one shard); a single URL of a cluster node is noticed too. On a cluster, a hit that
   * fails because a node went away drops the client and the next hit creates a new one, which
   * finds the replica that took over.
   */
  readonly url?: string | readonly string[];
  /** Prefix of every key (default `fw:ratelimit:`). */
  readonly prefix?: string;
  /**
   * Let requests through, uncounted, while Redis cannot be reached (default `false`: the route
   * answers 500 until Redis is back).
   */
  readonly failOpen?: boolean;
  /** Called with each Redis error swallowed by `failOpen` (default: none). */
  readonly onError?: (error: unknown) => void;
}

/** The atomic fixed-window counter. */
export const RATE_LIMIT_SCRIPT: string = `local count = redis.call('INCR', KEYS[1])
local ttl = redis.call('PTTL', KEYS[1])
if ttl < 0 then
  redis.call('PEXPIRE', KEYS[1], ARGV[1])
  ttl = tonumber(ARGV[1])
end
return {count, ttl}`;

interface OwnedClient extends RedisScriptClient {
  connect(): Promise<unknown>;
  sendCommand?(args: string[]): Promise<unknown>;
  close(): Promise<void>;
  on(event: "error", listener: (error: unknown) => void): unknown;
}

/** Whether a connected client's server is a Redis Cluster node (false when it cannot tell). */
async function clusterMode(client: OwnedClient): Promise<boolean> {
  try {
    const info = await client.sendCommand?.(["INFO", "cluster"]);
    return /cluster_enabled:1/.test(String(info));
  } catch {
    return false;
  }
}

/** The username and password of a Redis URL, as node-redis client options. */
function credentials(url: string): { username?: string; password?: string } {
  const u = new URL(url);
  return {
    ...(u.username ? { username: decodeURIComponent(u.username) } : {}),
    ...(u.password ? { password: decodeURIComponent(u.password) } : {}),
  };
}

async function sha1(text: string): Promise<string> {
  const digest = await crypto.subtle.digest("SHA-1", new TextEncoder().encode(text));
  return [...new Uint8Array(digest)].map((b) => b.toString(16).padStart(2, "0")).join("");
}

/** A {@linkcode RateLimitStore} in Redis. Create it with {@linkcode redisRateLimitStore}. */
export class RedisRateLimitStore implements RateLimitStore {
  readonly #prefix: string;
  #url: string | readonly string[] | undefined;
  #client: RedisScriptClient | undefined;
  #owned: OwnedClient | undefined;
  #ready: Promise<RedisScriptClient> | undefined;
  #sha: string | undefined;
  readonly #failOpen: boolean;
  readonly #onError: ((error: unknown) => void) | undefined;

  /**
   * Creates a store; prefer {@linkcode redisRateLimitStore}.
   *
   * @param options A client or a URL, and the key prefix.
   * @throws {TypeError} Unless exactly one of `client` and `url` is given.
   */
  constructor(options: RedisRateLimitStoreOptions) {
    const { client, url } = options ?? {};
    if ((client === undefined) === (url === undefined)) {
      throw new TypeError('Invalid redisRateLimitStore() options: give either "client" or "url"');
    }
    if (client !== undefined && typeof client.eval !== "function") {
      throw new TypeError(
        'Invalid redisRateLimitStore() option "client": expected a Redis client with eval()',
      );
    }
    this.#client = client;
    this.#url = url;
    this.#prefix = options.prefix ?? "fw:ratelimit:";
    this.#failOpen = options.failOpen === true;
    this.#onError = options.onError;
  }

  #connect(): Promise<RedisScriptClient> {
    return this.#ready ??= (async () => {
      const { createClient, createCluster } = await import("redis");
      let connected = false;
      const url = this.#url!;
      const socket = {
        connectTimeout: 5_000,
        ...(typeof url !== "string" && url[0].startsWith("rediss:") ? { tls: true as const } : {}),
        // the first connection fails fast; a lost one is retried in the background (on a
        // cluster a few times only: the next hit then rediscovers the nodes)
        reconnectStrategy: (retries: number, cause: Error) =>
          connected && (typeof url === "string" || retries < 4)
            ? Math.min(50 * 2 ** retries, 2_000)
            : cause,
      };
      // commands fail at once while disconnected (the request answers 500) instead of queuing
      const client =
        (typeof url === "string"
          ? createClient({ url, disableOfflineQueue: true, socket })
          : createCluster({
            rootNodes: url.map((u) => ({ url: u })),
            // the nodes it discovers need the credentials of the URLs too
            defaults: { disableOfflineQueue: true, ...credentials(url[0]), socket },
          })) as unknown as OwnedClient;
      client.on("error", () => {}); // reported through the failing commands
      this.#owned = client;
      try {
        await client.connect();
      } catch (error) {
        this.#ready = undefined;
        this.#owned = undefined;
        throw error;
      }
      connected = true;
      if (typeof url === "string" && await clusterMode(client)) {
        // One node of a Redis Cluster given as a single URL: a cluster client learns the others.
        await client.close().catch(() => {});
        this.#owned = undefined;
        this.#url = [url];
        this.#ready = undefined;
        return await this.#connect();
      }
      return client;
    })();
  }

  /** On a cluster, forgets the client after a node failure: the next hit creates a new one. */
  #dropAfter(error: unknown): void {
    const kind = (error as Error)?.constructor?.name;
    if (typeof this.#url === "string" || this.#url === undefined) return;
    if (kind === "ErrorReply" || kind === "SimpleError") {
      if (!/^(CLUSTERDOWN|TRYAGAIN|MASTERDOWN|READONLY)\b/.test((error as Error).message)) return;
    }
    const owned = this.#owned;
    this.#ready = undefined;
    this.#owned = undefined;
    void Promise.resolve(owned?.close()).catch(() => {});
  }

  /**
   * Counts one request for `key` in Redis.
   *
   * @param key The route and client key (the prefix is added).
   * @param windowMs The window length.
   * @returns The count and the time left in the window (count 0 when Redis is down and
   *   `failOpen` is set).
   * @throws {Error} When Redis cannot be reached and `failOpen` is not set (the request then
   *   answers 500).
   */
  async hit(key: string, windowMs: number): Promise<RateLimitHit> {
    if (!this.#failOpen) {
      return await this.#hit(key, windowMs).catch((error) => {
        this.#dropAfter(error);
        throw error;
      });
    }
    try {
      return await this.#hit(key, windowMs);
    } catch (error) {
      this.#dropAfter(error);
      this.#onError?.(error);
      return { count: 0, resetMs: windowMs };
    }
  }

  async #hit(key: string, windowMs: number): Promise<RateLimitHit> {
    const client = this.#client ?? await this.#connect();
    const options = { keys: [this.#prefix + key], arguments: [String(Math.ceil(windowMs))] };
    let reply: unknown;
    if (client.evalSha !== undefined) {
      this.#sha ??= await sha1(RATE_LIMIT_SCRIPT);
      try {
        reply = await client.evalSha(this.#sha, options);
      } catch (error) {
        if (!String((error as Error)?.message).includes("NOSCRIPT")) throw error;
        reply = await client.eval(RATE_LIMIT_SCRIPT, options);
      }
    } else {
      reply = await client.eval(RATE_LIMIT_SCRIPT, options);
    }
    const [count, ttl] = reply as [number, number];
    return { count: Number(count), resetMs: Math.max(0, Number(ttl)) };
  }

  /** Closes the client the store created from `url` (a client you passed stays open). */
  async close(): Promise<void> {
    const ready = this.#ready;
    this.#ready = undefined;
    if (ready === undefined) return;
    await ready.catch(() => {});
    await this.#owned?.close().catch(() => {});
    this.#owned = undefined;
  }
}

/**
 * Creates a Redis rate-limit store.
 *
 * @param options A connected `client` (node-redis v5 or anything with `eval`), or a `url`; and
 *   the key `prefix`.
 * @returns The store; pass it as `.rateLimit({ max, windowMs, store })`.
 * @throws {TypeError} Unless exactly one of `client` and `url` is given.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { redisRateLimitStore } from "@fw/application/redis-rate-limit";
 *
 * const store = redisRateLimitStore({ url: "redis://127.0.0.1:6379", prefix: `doc:${crypto.randomUUID()}:` });
 * const first = await store.hit("GET /a|10.0.0.1", 60_000);
 * const second = await store.hit("GET /a|10.0.0.1", 60_000);
 * assert.deepEqual([first.count, second.count], [1, 2]);
 * assert.ok(second.resetMs > 0 && second.resetMs <= 60_000);
 * await store.close();
 * ```
 */
export function redisRateLimitStore(options: RedisRateLimitStoreOptions): RedisRateLimitStore {
  return new RedisRateLimitStore(options);
}
