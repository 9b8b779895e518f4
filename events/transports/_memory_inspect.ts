/**
 * Internal to the memory broker: what `MemoryBroker.inspect()` answers. The broker hands every
 * message to a consumer at once, so its only backlog is a competing group with no instance yet;
 * the consumer's own queue is counted by the event bus (`EventBus.handlerLoad()`), and retries
 * wait on timers that are not kept per group.
 *
 * @module
 */

import type { Envelope } from "../envelope.ts";
import type { QueueStats } from "../transport.ts";

/** The part of a memory-broker group that inspection reads. */
export interface InspectedGroup {
  readonly name: string;
  readonly distribution: "competing" | "broadcast";
  readonly instances: readonly unknown[];
  readonly pending: ReadonlyArray<readonly [Envelope, number]>;
}

const NOTE = "in-process: messages go straight to the handler's queue; " +
  "retries wait on timers of the whole broker";

/**
 * One entry per group of every topic.
 *
 * @param topics The broker's groups by topic.
 * @param retries Retries scheduled in the whole broker.
 * @param now The broker clock's time.
 * @returns The stats, sorted by topic and group.
 */
export function inspectMemory(
  topics: ReadonlyMap<string, ReadonlyMap<string, InspectedGroup>>,
  retries: number,
  now: number,
): QueueStats[] {
  const out: QueueStats[] = [];
  for (const [topic, groups] of topics) {
    for (const g of groups.values()) {
      const oldest = g.pending[0]?.[0];
      out.push({
        topic,
        group: g.name,
        waiting: g.pending.length,
        ...(oldest ? { oldestAgeMs: Math.max(0, now - oldest.publishedAt) } : {}),
        details: { instances: g.instances.length, retriesScheduled: retries },
        note: NOTE,
      });
    }
  }
  return out.sort((a, b) => a.topic.localeCompare(b.topic) || a.group.localeCompare(b.group));
}
