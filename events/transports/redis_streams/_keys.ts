/**
 * Internal to the Redis Streams transport: the key layout and the shape of stream entries.
 *
 * Every key starts with the transport's `keyPrefix` (`P`, default `fw:`). Topic names are dotted
 * words (letters, digits, `_`, `-`), so they never contain `:`, `{` or `}`; that keeps the layout
 * unambiguous. The topic sits in braces, a Redis Cluster hash tag: every key of one topic hashes
 * to the same slot, so each script (which touches one topic's keys) runs on one node, and the
 * topics spread over the cluster's shards. On a single Redis the braces are just characters.
 *
 * | Key | Type | Holds |
 * | --- | --- | --- |
 * | `P{<topic>}` | stream | the topic's messages (field `e`: the JSON envelope) |
 * | `P{<topic>}:retries:<group>` | stream | retries that fell due, for one Redis group (fields `e`, `a`) |
 * | `P{<topic>}:delayed:<group>` | sorted set | retries waiting, score = due time (ms) |
 * | `P{<topic>}:scheduled` | sorted set | delayed publishes waiting, score = due time (ms) |
 * | `P{<topic>}:dedupe:<dedupeKey>` | string | a `dedupeKey` seen within the window (`PX`) |
 * | `P{<topic>}:instances` | sorted set | the topic's live instances, score = heartbeat expiry (ms) |
 * | `P:topics` | set | the topics that have an instance registry (for the reaper and `inspect()`) |
 * | `P:dead-letters` | stream | dead letters nobody subscribes to (bounded) |
 * | `P:schedule:<name>` | string | a cron schedule's state (`_schedule.ts`) |
 *
 * A partitioned topic (`partitions: N`) has N such key sets, one per partition `i`, tagged
 * `{<topic>#<i>}` (partition 0 keeps `{<topic>}`), so its partitions spread over the shards.
 *
 * Redis consumer groups on `P<topic>` (and on its retry streams): a competing handler group
 * `billing` is the Redis group `billing`; each instance of a broadcast group `cache` has a Redis
 * group of its own, `cache~<instanceId>`, which the registry removes when the instance is gone.
 *
 * @module
 */

import type { SubscriptionSpec } from "../../transport.ts";

/** The hash-tagged part of a topic's (or one partition's) keys: `{<topic>}`. */
function tag(topic: string): string {
  return `{${topic}}`;
}

/** The keys of one transport. */
export const keys = {
  /** The topic's stream. */
  stream: (p: string, topic: string): string => `${p}${tag(topic)}`,
  /** Retry stream of one Redis group. */
  retries: (p: string, topic: string, redisGroup: string): string =>
    `${p}${tag(topic)}:retries:${redisGroup}`,
  /** Delayed-retry sorted set of one Redis group. */
  delayed: (p: string, topic: string, redisGroup: string): string =>
    `${p}${tag(topic)}:delayed:${redisGroup}`,
  /** Delayed publishes of the topic (`_scheduled.ts`). */
  scheduled: (p: string, topic: string): string => `${p}${tag(topic)}:scheduled`,
  /** Dedupe marker. */
  dedupe: (p: string, topic: string, dedupeKey: string): string =>
    `${p}${tag(topic)}:dedupe:${dedupeKey}`,
  /** Live-instance registry of one topic. */
  instances: (p: string, topic: string): string => `${p}${tag(topic)}:instances`,
  /** The topics that have a live-instance registry. */
  topics: (p: string): string => `${p}:topics`,
  /** Dead-letter store. */
  deadLetters: (p: string): string => `${p}:dead-letters`,
};

/** The name whose keys hold partition `i` of `topic`: the topic itself for 0, else `<topic>#<i>`. */
export function partName(topic: string, i: number): string {
  return i === 0 ? topic : `${topic}#${i}`;
}

/** The topic and partition of a {@linkcode partName}. */
export function parsePartName(name: string): { topic: string; partition: number } {
  const hash = name.lastIndexOf("#");
  return hash < 0
    ? { topic: name, partition: 0 }
    : { topic: name.slice(0, hash), partition: Number(name.slice(hash + 1)) };
}

/** FNV-1a (32 bits) of a string: picks the partition of a message `key`. */
export function hashKey(key: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < key.length; i++) {
    h ^= key.charCodeAt(i);
    h = Math.imul(h, 0x01000193) >>> 0;
  }
  return h;
}

/** The Redis consumer group of a subscription. */
export function redisGroup(spec: SubscriptionSpec): string {
  return spec.distribution === "broadcast" ? `${spec.group}~${spec.instanceId}` : spec.group;
}

/** A registry member: what a reaper needs to clean up after an instance. */
export interface InstanceRecord {
  /** Topic name. */
  readonly t: string;
  /** Redis group. */
  readonly g: string;
  /** Consumer name (the instance id). */
  readonly c: string;
  /** `b` for a broadcast instance (its group goes with it), `c` for competing. */
  readonly k: "b" | "c";
}

/** The registry member of a subscription (a stable JSON string). */
export function instanceMember(spec: SubscriptionSpec): string {
  const record: InstanceRecord = {
    t: spec.topic,
    g: redisGroup(spec),
    c: spec.instanceId,
    k: spec.distribution === "broadcast" ? "b" : "c",
  };
  return JSON.stringify(record);
}

/** Reads a registry member; `undefined` for one fw did not write. */
export function parseInstanceMember(member: string): InstanceRecord | undefined {
  try {
    const r = JSON.parse(member) as InstanceRecord;
    if (typeof r?.t === "string" && typeof r.g === "string" && typeof r.c === "string") return r;
  } catch {
    // not ours
  }
  return undefined;
}

/** One entry read from a stream, decoded. */
export interface StreamEntry {
  /** Stream entry id. */
  readonly id: string;
  /** The envelope as JSON text (or whatever the entry held). */
  readonly raw: string | undefined;
  /** The attempt it carries (1 on the topic stream). */
  readonly attempt: number;
}

/**
 * Decodes a raw `[id, [field, value, ...]]` entry. Fields other than `e` and `a` are ignored;
 * a missing `e` leaves `raw` undefined (the consumer dead-letters it as malformed).
 */
export function decodeEntry(entry: unknown): StreamEntry | undefined {
  if (!Array.isArray(entry) || typeof entry[0] !== "string") return undefined;
  const fields = entry[1];
  let raw: string | undefined;
  let attempt = 1;
  if (Array.isArray(fields)) {
    for (let i = 0; i + 1 < fields.length; i += 2) {
      const f = String(fields[i]);
      if (f === "e") raw = String(fields[i + 1]);
      else if (f === "a") {
        const a = Number(fields[i + 1]);
        if (Number.isInteger(a) && a >= 1) attempt = a;
      }
    }
  }
  return { id: entry[0], raw, attempt };
}
