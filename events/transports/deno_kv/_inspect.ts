/**
 * Internal to the Deno KV transport: what `inspect()` answers. The Deno KV queue itself cannot be
 * read (no API lists or counts enqueued messages, nor the delayed ones that carry retries), so
 * per group this reports what the transport keeps in keys of its own:
 *
 * - `waiting`: messages parked for a group with no live instance (`[prefix, "parked", ...]`),
 *   with the age of the oldest;
 * - `details.instances`: the group's live instances;
 * - `details.undelivered`: messages Deno KV gave up on, for the whole transport.
 *
 * Messages on the queue, in a handler, or waiting for a retry are not visible; `note` says so.
 *
 * @module
 */

import type { QueueStats } from "../../transport.ts";
import { type DeliverMessage, keys } from "./_keys.ts";

const NOTE = "Deno KV cannot list its queue: messages on the queue, in a handler or waiting " +
  "for a retry are not counted; waiting counts messages parked for a group with no instance";

async function count(kv: Deno.Kv, prefix: Deno.KvKey): Promise<number> {
  let n = 0;
  for await (const _ of kv.list({ prefix })) n++;
  return n;
}

/**
 * Reads what the transport's own keys tell about each group.
 *
 * @param kv The database.
 * @param p The key prefix.
 * @param now The transport clock's time.
 * @returns The stats, sorted by topic and group.
 */
export async function inspectDenoKv(kv: Deno.Kv, p: string, now: number): Promise<QueueStats[]> {
  const undelivered = await count(kv, keys.undeliveredAll(p));
  const out: QueueStats[] = [];
  for await (const entry of kv.list({ prefix: [p, "groups"] })) {
    const [, , topic, group] = entry.key as [string, string, string, string];
    let waiting = 0;
    let oldest: number | undefined;
    for await (
      const parked of kv.list<DeliverMessage>({ prefix: keys.parkedOf(p, topic, group) })
    ) {
      waiting++;
      const at = parked.value?.envelope?.publishedAt;
      if (typeof at === "number" && (oldest === undefined || at < oldest)) oldest = at;
    }
    out.push({
      topic,
      group,
      waiting,
      ...(oldest !== undefined ? { oldestAgeMs: Math.max(0, now - oldest) } : {}),
      details: { instances: await count(kv, keys.instances(p, topic, group)), undelivered },
      note: NOTE,
    });
  }
  return out.sort((a, b) => a.topic.localeCompare(b.topic) || a.group.localeCompare(b.group));
}
