/**
 * Internal to the SQL transport: what `inspect()` answers, from one query over the `queue` and
 * `groups` tables. Per topic and group (broadcast instances summed):
 *
 * - `waiting`: rows that may be claimed now (`available_at <= now()`: never claimed, or a claim
 *   whose deadline passed);
 * - `inFlight`: rows claimed by a consumer whose visibility deadline has not passed;
 * - `retrying`: unclaimed rows due later (a retry's back-off);
 * - `oldestAgeMs`: age of the oldest row still queued, from its `enqueued_at`.
 *
 * @module
 */

import type { SqlQueryable } from "../../_postgres.ts";
import type { QueueStats } from "../../transport.ts";
import type { SqlNames } from "./_schema.ts";

interface Row {
  topic: string;
  grp: string;
  distribution: string;
  waiting: string | number;
  in_flight: string | number;
  retrying: string | number;
  oldest_ms: string | number | null;
}

/**
 * Reads each group's backlog.
 *
 * @param sql A connection.
 * @param n The table names.
 * @returns The stats, sorted by topic and group.
 */
export async function inspectSql(sql: SqlQueryable, n: SqlNames): Promise<QueueStats[]> {
  const rows = await sql.unsafe(`
SELECT g.topic, g.grp, g.distribution,
  count(q.id) FILTER (WHERE q.available_at <= now()) AS waiting,
  count(q.id) FILTER (WHERE q.claimed_by IS NOT NULL AND q.available_at > now()) AS in_flight,
  count(q.id) FILTER (WHERE q.claimed_by IS NULL AND q.available_at > now()) AS retrying,
  floor(extract(epoch FROM now() - min(q.enqueued_at)) * 1000) AS oldest_ms
FROM ${n.groups} g
LEFT JOIN ${n.queue} q ON q.topic = g.topic AND q.grp = g.grp
GROUP BY g.topic, g.grp, g.distribution
ORDER BY g.topic, g.grp`) as unknown as Row[];
  return rows.map((r) => ({
    topic: r.topic,
    group: r.grp,
    waiting: Number(r.waiting),
    inFlight: Number(r.in_flight),
    retrying: Number(r.retrying),
    ...(r.oldest_ms !== null ? { oldestAgeMs: Math.max(0, Number(r.oldest_ms)) } : {}),
    details: { distribution: r.distribution },
  }));
}
