/**
 * Internal to the Redis Streams transport: its options, checked at construction (a mistake throws
 * naming the option), and their defaults.
 *
 * @module
 */

import { type Clock, type Logger, type Meter, systemClock } from "@fw/runtime";
import { checkRedisSource, type RedisClient, type RedisClusterClient } from "../../_redis.ts";

/** Options of `kvStreamTransport`. */
export interface KvStreamTransportOptions {
  /**
   * A Redis URL (`redis://host:6379/0`, `rediss://...`): fw creates, connects and closes the client.
   * A list of node URLs means a Redis Cluster (fw creates a node-redis cluster client; one or more
   * nodes are enough, it learns the others); a single URL of a cluster node is noticed too.
   */
  url?: string | readonly string[];
  /**
   * A connected client of yours instead of `url` (a node-redis v5 client, or any object with the
   * {@linkcode RedisClient} methods). fw duplicates it for its blocking readers and leaves it open.
   */
  client?: RedisClient | RedisClusterClient;
  /**
   * First part of every key (default `"fw:"`). Processes with the same prefix share topics,
   * groups and dead letters; give each application its own.
   */
  keyPrefix?: string;
  /** An instance counts as live this long after its last heartbeat, in ms (default 30000). */
  instanceTtlMs?: number;
  /**
   * Added to a handler's `timeout` to get how long a delivery may sit unacknowledged with a
   * consumer before another instance of its group takes it over (default 5000).
   */
  claimGraceMs?: number;
  /** Most deliveries one subscription holds unsettled at a time (default 256). */
  prefetch?: number;
  /** Most entries one read returns (default 128). */
  batchSize?: number;
  /** How long a blocking read waits before it looks again, in ms (default 2000). */
  blockMs?: number;
  /** How often a subscription looks for retries other instances scheduled, in ms (default 1000). */
  retryPollMs?: number;
  /** How long a `dedupeKey` suppresses repeats, in ms (default 600000). */
  dedupeWindowMs?: number;
  /** Dead letters kept with no `<topic>.dlq` subscriber (default 1000). */
  deadLetterLimit?: number;
  /**
   * A publish that gets no reply within this many ms (Redis unreachable) rejects (default
   * 10000). The command may still reach Redis after the reconnect, so a publish that rejected
   * this way may be delivered: retry it, and handlers see at most a duplicate.
   */
  publishTimeoutMs?: number;
  /**
   * Streams per topic (default 1): a number for every topic, or an object naming topics (the
   * others have 1), such as `{ "orders.created": 3 }`. A partitioned topic's partitions have keys
   * of their own (tagged `{<topic>#<i>}`), so on a Redis Cluster they spread over the shards and
   * one hot topic's load with them. A message goes to the partition of its `key` (the same key,
   * the same partition, in publish order), else of its `dedupeKey`, else to the next partition in
   * turn. Each subscription reads every partition (a reader, a blocking connection and `prefetch`
   * per partition). Every process on the prefix must use the same count; changing it strands
   * what waits in partitions that are no longer read, so drain a topic first.
   */
  partitions?: number | Readonly<Record<string, number>>;
  /**
   * Replicas that must have each publish before it resolves (default 0: resolve once the master
   * has it). Redis replicates asynchronously: a master that dies before its replicas copied a
   * write loses it when a replica takes over. With `waitForReplicas: 1` every publish is followed
   * by `WAIT 1 <waitForReplicasMs>` on the same connection (one per batch of publishes), and a
   * publish that not enough replicas confirmed in time rejects, so the caller publishes it again
   * (handlers may then see a duplicate, never a loss of an acknowledged publish). Give at most the
   * number of replicas each master has.
   */
  waitForReplicas?: number;
  /** How long a publish waits for `waitForReplicas` replicas, in ms (default 1000). */
  waitForReplicasMs?: number;
  /**
   * Trims the streams of subscribed topics below what every group has acknowledged, on each
   * heartbeat (default true). Set false to keep every entry (trim them yourself).
   */
  trim?: boolean;
  /** Clock for heartbeats, retry due times and instance expiry (default the system clock). */
  clock?: Clock;
  /** Logger for reconnects, reaped instances, evictions and failures. */
  logger?: Logger;
  /** Meter for `events.dlq.evicted`. */
  meter?: Meter;
}

/** The options with defaults applied. */
export interface ResolvedOptions {
  readonly url?: string | readonly string[];
  readonly client?: RedisClient | RedisClusterClient;
  readonly prefix: string;
  readonly ttl: number;
  readonly claimGrace: number;
  readonly prefetch: number;
  readonly batch: number;
  readonly blockMs: number;
  readonly retryPoll: number;
  readonly dedupeWindow: number;
  readonly deadLetterLimit: number;
  readonly publishTimeout: number;
  readonly trim: boolean;
  readonly waitReplicas: number;
  /** Streams of a topic. */
  readonly partitionsOf: (topic: string) => number;
  readonly waitReplicasMs: number;
  readonly clock: Clock;
  readonly logger?: Logger;
  readonly meter?: Meter;
}

/** Name used in messages. */
export const OWNER = "kvStreamTransport()";

function integer(name: string, value: number | undefined, fallback: number, min = 1): number {
  const v = value ?? fallback;
  if (!Number.isInteger(v) || v < min) {
    throw new TypeError(
      `Invalid ${OWNER} option "${name}": expected an integer >= ${min}, got ${v}`,
    );
  }
  return v;
}

/** Most partitions a topic may have. */
const MAX_PARTITIONS = 1024;

function resolvePartitions(value: KvStreamTransportOptions["partitions"]): (t: string) => number {
  if (value === undefined) return () => 1;
  if (typeof value === "number") {
    const n = integer("partitions", value, 1);
    if (n > MAX_PARTITIONS) {
      throw new TypeError(
        `Invalid ${OWNER} option "partitions": expected at most ${MAX_PARTITIONS}, got ${n}`,
      );
    }
    return () => n;
  }
  if (typeof value !== "object" || value === null || Array.isArray(value)) {
    throw new TypeError(
      `Invalid ${OWNER} option "partitions": expected a number or an object of topic names to numbers`,
    );
  }
  const counts = new Map<string, number>();
  for (const [topic, n] of Object.entries(value)) {
    if (!Number.isInteger(n) || n < 1 || n > MAX_PARTITIONS) {
      throw new TypeError(
        `Invalid ${OWNER} option "partitions": topic "${topic}" expected an integer from 1 to ${MAX_PARTITIONS}, got ${n}`,
      );
    }
    counts.set(topic, n);
  }
  return (topic) => counts.get(topic) ?? 1;
}

/**
 * Checks the options and applies the defaults.
 *
 * @param options As given.
 * @returns The resolved options.
 * @throws {TypeError} Naming the option that is wrong.
 */
export function resolveOptions(options: KvStreamTransportOptions): ResolvedOptions {
  if (typeof options !== "object" || options === null) {
    throw new TypeError(`Invalid ${OWNER} options: expected an object with "url" or "client"`);
  }
  checkRedisSource(OWNER, options);
  const prefix = options.keyPrefix ?? "fw:";
  if (typeof prefix !== "string" || prefix === "") {
    throw new TypeError(`Invalid ${OWNER} option "keyPrefix": expected a non-empty string`);
  }
  if (/[{}]/.test(prefix)) {
    throw new TypeError(
      `Invalid ${OWNER} option "keyPrefix": "${prefix}" has a "{" or "}" (fw puts each topic in braces, a Redis Cluster hash tag)`,
    );
  }
  if (options.trim !== undefined && typeof options.trim !== "boolean") {
    throw new TypeError(`Invalid ${OWNER} option "trim": expected a boolean`);
  }
  return {
    url: options.url,
    client: options.client,
    prefix,
    ttl: integer("instanceTtlMs", options.instanceTtlMs, 30_000, 3),
    claimGrace: integer("claimGraceMs", options.claimGraceMs, 5_000, 0),
    prefetch: integer("prefetch", options.prefetch, 256),
    batch: integer("batchSize", options.batchSize, 128),
    blockMs: integer("blockMs", options.blockMs, 2_000),
    retryPoll: integer("retryPollMs", options.retryPollMs, 1_000),
    dedupeWindow: integer("dedupeWindowMs", options.dedupeWindowMs, 600_000),
    deadLetterLimit: integer("deadLetterLimit", options.deadLetterLimit, 1_000),
    publishTimeout: integer("publishTimeoutMs", options.publishTimeoutMs, 10_000),
    trim: options.trim ?? true,
    partitionsOf: resolvePartitions(options.partitions),
    waitReplicas: integer("waitForReplicas", options.waitForReplicas, 0, 0),
    waitReplicasMs: integer("waitForReplicasMs", options.waitForReplicasMs, 1_000),
    clock: options.clock ?? systemClock,
    logger: options.logger,
    meter: options.meter,
  };
}
