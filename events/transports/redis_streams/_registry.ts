/**
 * Internal to the Redis Streams transport: the registry of live instances (per topic, a sorted
 * set scored by heartbeat expiry, in the topic's slot so that reaping is one script; the set
 * `P:topics` lists the topics that have one), the reaper that cleans up after instances that are gone, and the safe
 * trimming of topic streams.
 *
 * - Heartbeat: every live subscription's member gets a new expiry every third of the TTL.
 * - Reaping (any live transport on the prefix, each heartbeat): a broadcast instance whose expiry
 *   passed loses its Redis group (pending entries included: they were for it alone), its retry
 *   stream and its delayed set, so broadcast groups never leak; a competing instance's consumer is
 *   deleted once it holds no pending entry (the group's live instances claim them first).
 * - Trimming: a topic stream is trimmed with `XTRIM MINID ~` below the oldest entry any group may
 *   still need: its oldest pending entry, else its last-delivered id. Entries a group has not
 *   read or not acknowledged are never dropped.
 *
 * @module
 */

import type { Logger } from "@fw/runtime";
import type { RedisClient } from "../../_redis.ts";
import { keys, parseInstanceMember } from "./_keys.ts";
import { REAP } from "./_scripts.ts";

/** Writes new expiries for the members (one registry per topic) and lists their topics. */
export async function beat(
  redis: RedisClient,
  prefix: string,
  members: readonly string[],
  expiresAt: number,
): Promise<void> {
  const byTopic = new Map<string, string[]>();
  for (const m of members) {
    const topic = parseInstanceMember(m)?.t;
    if (topic === undefined) continue;
    const args = byTopic.get(topic) ?? ["ZADD", keys.instances(prefix, topic)];
    args.push(String(expiresAt), m);
    byTopic.set(topic, args);
  }
  if (byTopic.size === 0) return;
  await Promise.all([
    redis.sendCommand(["SADD", keys.topics(prefix), ...byTopic.keys()]),
    ...[...byTopic.values()].map((args) => redis.sendCommand(args)),
  ]);
}

/** The topics that have an instance registry. */
export async function registeredTopics(redis: RedisClient, prefix: string): Promise<string[]> {
  const topics = await redis.sendCommand(["SMEMBERS", keys.topics(prefix)]) as unknown[];
  return (topics ?? []).map(String);
}

/**
 * Reaps one registry member now (or when its expiry passed before `now`).
 *
 * @returns The script's answer: entries a broadcast group still held, -1 alive or gone, -2
 *   a competing consumer that still holds entries.
 */
export async function reapMember(
  redis: RedisClient,
  prefix: string,
  member: string,
  now: number,
): Promise<number> {
  const r = parseInstanceMember(member);
  if (!r) return -1;
  return Number(
    await REAP.run(redis, [
      keys.instances(prefix, r.t),
      keys.stream(prefix, r.t),
      keys.retries(prefix, r.t, r.g),
      keys.delayed(prefix, r.t, r.g),
    ], [member, String(now), r.g, r.c, r.k]),
  );
}

/** Reaps every member whose heartbeat expired, topic by topic. */
export async function reap(
  redis: RedisClient,
  prefix: string,
  now: number,
  logger?: Logger,
): Promise<void> {
  // One look per topic, sent together (node-redis pipelines them; on a cluster, per shard).
  await Promise.all((await registeredTopics(redis, prefix)).map(async (topic) => {
    const registry = keys.instances(prefix, topic);
    const expired = await redis.sendCommand([
      "ZRANGEBYSCORE",
      registry,
      "-inf",
      String(now),
      "LIMIT",
      "0",
      "100",
    ]) as string[];
    for (const member of expired ?? []) {
      const r = parseInstanceMember(member);
      if (!r || r.t !== topic) {
        await redis.sendCommand(["ZREM", registry, member]);
        continue;
      }
      const held = await reapMember(redis, prefix, member, now);
      if (held >= 0 && r.k === "b") {
        logger?.warn("redis streams: removed the group of a broadcast instance that is gone", {
          topic: r.t,
          group: r.g,
          discardedPending: held,
        });
      }
    }
  }));
}

/** Compares two stream ids (`ms-seq`). */
export function compareIds(a: string, b: string): number {
  const [am, as = "0"] = a.split("-");
  const [bm, bs = "0"] = b.split("-");
  if (am !== bm) return BigInt(am) < BigInt(bm) ? -1 : 1;
  if (as === bs) return 0;
  return BigInt(as) < BigInt(bs) ? -1 : 1;
}

function field(flat: unknown, name: string): unknown {
  if (!Array.isArray(flat)) return undefined;
  for (let i = 0; i + 1 < flat.length; i += 2) if (flat[i] === name) return flat[i + 1];
  return undefined;
}

/**
 * The id below which no group of the stream needs an entry, or `undefined` when the stream has
 * no group (nothing is trimmed then).
 */
export async function safeTrimId(redis: RedisClient, stream: string): Promise<string | undefined> {
  let groups: unknown[];
  try {
    groups = await redis.sendCommand(["XINFO", "GROUPS", stream]) as unknown[];
  } catch {
    return undefined; // no such stream
  }
  let safe: string | undefined;
  for (const g of groups ?? []) {
    let need = String(field(g, "last-delivered-id") ?? "0-0");
    if (Number(field(g, "pending") ?? 0) > 0) {
      const summary = await redis.sendCommand([
        "XPENDING",
        stream,
        String(field(g, "name")),
      ]) as unknown[];
      if (typeof summary?.[1] === "string") need = summary[1];
    }
    if (safe === undefined || compareIds(need, safe) < 0) safe = need;
  }
  return safe;
}

/** Trims a topic stream below {@linkcode safeTrimId}. Returns how many entries went. */
export async function trimStream(redis: RedisClient, stream: string): Promise<number> {
  const safe = await safeTrimId(redis, stream);
  if (safe === undefined || safe === "0-0") return 0;
  return Number(await redis.sendCommand(["XTRIM", stream, "MINID", "~", safe]));
}
