/**
 * Internal to the Redis Streams transport: what `inspect()` answers. Topics come from the
 * instance registries (every topic some live instance consumes); for each, `XINFO GROUPS` gives
 * every Redis group on the stream, live or not:
 *
 * - `waiting`: the group's `lag` (entries added after its last-delivered id; Redis 7);
 * - `inFlight`: its `pending` count (delivered, not acknowledged: the PEL);
 * - `retrying`: its delayed-retry set plus the retries that fell due and wait in its retry stream;
 * - `oldestAgeMs`: from the id of its oldest pending entry (`XPENDING`) or of its first
 *   undelivered entry (`XRANGE`), whichever is older (stream ids are times in ms).
 *
 * A partitioned topic appears once per partition and group (`details.partition`). A broadcast
 * group appears once per instance (`<group>~<instanceId>`), as Redis keeps it.
 *
 * @module
 */

import type { RedisClient } from "../../_redis.ts";
import type { QueueStats } from "../../transport.ts";
import { keys, parsePartName } from "./_keys.ts";
import { registeredTopics } from "./_registry.ts";

function field(flat: unknown, name: string): unknown {
  if (!Array.isArray(flat)) return undefined;
  for (let i = 0; i + 1 < flat.length; i += 2) if (flat[i] === name) return flat[i + 1];
  return undefined;
}

/** The ms part of a stream id (`1700000000000-3`). */
function idTime(id: unknown): number | undefined {
  if (typeof id !== "string") return undefined;
  const ms = Number(id.split("-")[0]);
  return Number.isFinite(ms) && ms > 0 ? ms : undefined;
}

async function oldestTime(
  redis: RedisClient,
  stream: string,
  group: string,
  pending: number,
  lag: number,
  lastDelivered: string,
): Promise<number | undefined> {
  const times: number[] = [];
  if (pending > 0) {
    const summary = await redis.sendCommand(["XPENDING", stream, group]) as unknown[];
    const t = idTime(summary?.[1]);
    if (t !== undefined) times.push(t);
  }
  if (lag > 0) {
    const next = await redis.sendCommand(
      ["XRANGE", stream, `(${lastDelivered}`, "+", "COUNT", "1"],
    ) as unknown[][];
    const t = idTime(next?.[0]?.[0]);
    if (t !== undefined) times.push(t);
  }
  return times.length > 0 ? Math.min(...times) : undefined;
}

async function groupsOf(redis: RedisClient, stream: string): Promise<unknown[]> {
  try {
    return (await redis.sendCommand(["XINFO", "GROUPS", stream]) as unknown[]) ?? [];
  } catch {
    return []; // no such stream yet
  }
}

/**
 * Reads the backlog of every group of every registered topic.
 *
 * @param redis The main connection.
 * @param prefix The key prefix.
 * @param now The transport clock's time.
 * @returns The stats, sorted by topic and group.
 */
export async function inspectRedis(
  redis: RedisClient,
  prefix: string,
  now: number,
): Promise<QueueStats[]> {
  const topics: string[] = [];
  for (const topic of await registeredTopics(redis, prefix)) {
    if (Number(await redis.sendCommand(["ZCARD", keys.instances(prefix, topic)])) > 0) {
      topics.push(topic);
    }
  }
  const out: QueueStats[] = [];
  const partitioned = new Set(
    topics.map((t) => parsePartName(t)).filter((p) => p.partition > 0)
      .map((p) => p.topic),
  );
  for (const topic of topics.sort()) {
    const stream = keys.stream(prefix, topic);
    // A partitioned topic has a row per partition and group, under the topic's own name.
    const part = parsePartName(topic);
    const where: Record<string, number> = partitioned.has(part.topic)
      ? { partition: part.partition }
      : {};
    for (const g of await groupsOf(redis, stream)) {
      const group = String(field(g, "name"));
      const pending = Number(field(g, "pending") ?? 0);
      const rawLag = field(g, "lag");
      const lag = rawLag === null || rawLag === undefined ? undefined : Number(rawLag);
      const lastDelivered = String(field(g, "last-delivered-id") ?? "0-0");
      const [delayed, due] = await Promise.all([
        redis.sendCommand(["ZCARD", keys.delayed(prefix, topic, group)]),
        redis.sendCommand(["XLEN", keys.retries(prefix, topic, group)]),
      ]);
      const oldest = await oldestTime(redis, stream, group, pending, lag ?? 0, lastDelivered);
      out.push({
        topic: part.topic,
        group,
        ...(lag !== undefined ? { waiting: lag } : {}),
        inFlight: pending,
        retrying: Number(delayed) + Number(due),
        ...(oldest !== undefined ? { oldestAgeMs: Math.max(0, now - oldest) } : {}),
        details: {
          consumers: Number(field(g, "consumers") ?? 0),
          lastDeliveredId: lastDelivered,
          ...where,
        },
        ...(lag === undefined
          ? { note: "Redis cannot tell this group's lag (trimmed stream)" }
          : {}),
      });
    }
  }
  return out;
}
