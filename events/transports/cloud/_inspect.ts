/**
 * Internal to the cloud pub/sub transport: `inspect()` over a client that can tell its
 * subscriptions' backlog. The transport names a group's subscription `<topic>~<group>` (plus
 * `~<instanceId>` for a broadcast instance), so the group is read back from that name.
 *
 * @module
 */

import type { QueueStats } from "../../transport.ts";
import type { CloudPubSubClient } from "./client.ts";

/**
 * The client's subscriptions as queue stats.
 *
 * @param client A client with `inspect()`.
 * @returns The stats, sorted by topic and group.
 */
export async function inspectCloud(client: CloudPubSubClient): Promise<QueueStats[]> {
  const subs = await client.inspect!();
  return subs.map((s) => {
    const mine = s.subscription.startsWith(`${s.topic}~`);
    const { subscription: _, ...figures } = s;
    return { ...figures, group: mine ? s.subscription.slice(s.topic.length + 1) : s.subscription };
  }).sort((a, b) => a.topic.localeCompare(b.topic) || a.group.localeCompare(b.group));
}
