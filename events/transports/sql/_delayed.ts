/**
 * Internal to the SQL transport: delayed publishes. A delayed message is an ordinary queue row
 * whose `available_at` is its due time, so the claim query (`available_at <= now()`) leaves it
 * alone until then, and it survives restarts like any row (inside an outbox `tx` too).
 *
 * Consumers learn when to look from the wake-up `NOTIFY`: a delayed publish sends
 * `<topic>@<due ms>` (the due time rounded up to {@linkcode WAKE_BUCKET_MS}, so a burst of delayed
 * publishes makes a few distinct wake-ups, not one each), and each claim loop of that topic arms a
 * timer for then. A process that starts (or reconnects) after the wake-up was sent finds the next
 * due row of each of its groups on its slow poll ({@linkcode nextDueSql}).
 *
 * @module
 */

import type { Clock } from "@fw/runtime";
import type { SqlQueryable } from "../../_postgres.ts";
import type { SubscriptionSpec } from "../../transport.ts";
import type { SqlNames } from "./_schema.ts";

/** How far ahead a delayed publish may be due on PostgreSQL: 365 days. */
export const SQL_MAX_DELAY_MS = 365 * 24 * 3600 * 1000;

/** Due times in wake-ups are rounded up to this many ms. */
export const WAKE_BUCKET_MS = 25;

/**
 * The wake-up payload of a delayed publish.
 *
 * @param wake The plain wake-up payload (the topic, or `""` for every consumer).
 * @param at Due time (ms since the epoch).
 * @returns `<wake>@<due ms>`.
 */
export function delayedWake(wake: string, at: number): string {
  return `${wake}@${Math.ceil(at / WAKE_BUCKET_MS) * WAKE_BUCKET_MS}`;
}

/**
 * Reads a wake-up payload.
 *
 * @param payload What the `NOTIFY` carried.
 * @returns The topic (`""`: every consumer) and, for a delayed publish, when to look.
 */
export function parseWake(payload: string): { topic: string; at?: number } {
  const i = payload.lastIndexOf("@");
  if (i < 0) return { topic: payload };
  const at = Number(payload.slice(i + 1));
  return Number.isFinite(at) ? { topic: payload.slice(0, i), at } : { topic: payload };
}

/**
 * `$1` topic, `$2` group, `$3` instance. Returns `at`: the earliest future `available_at` of the
 * group's rows in ms since the epoch (null when there is none).
 *
 * @param n Quoted names.
 * @returns The statement.
 */
export function nextDueSql(n: SqlNames): string {
  return `SELECT (extract(epoch FROM min(available_at)) * 1000)::float8 AS at FROM ${n.queue}
WHERE topic = $1 AND grp = $2 AND instance = $3 AND available_at > now()`;
}

/** A claim loop as the next-due look sees it. */
export interface DueLoop {
  readonly spec: SubscriptionSpec;
  wakeIn(ms: number): void;
}

/**
 * Arms each loop for its group's next due row when that falls before the next poll.
 *
 * @param sql The client.
 * @param statement {@linkcode nextDueSql}.
 * @param loops The claim loops.
 * @param clock The clock.
 * @param horizon The poll interval.
 */
export async function wakeAtNextDue(
  sql: SqlQueryable,
  statement: string,
  loops: Iterable<DueLoop>,
  clock: Clock,
  horizon: number,
): Promise<void> {
  for (const loop of loops) {
    const s = loop.spec;
    const instance = s.distribution === "broadcast" ? s.instanceId : "";
    const rows = await sql.unsafe(statement, [s.topic, s.group, instance], { prepare: true });
    const at = (rows[0] as { at: number | null } | undefined)?.at;
    if (typeof at === "number" && at - clock.now() < horizon) loop.wakeIn(at - clock.now());
  }
}
