/**
 * Internal to the SQL transport: one heartbeat round of a transport, run every third of the
 * instance TTL (and of the visibility timeout). It refreshes the `instances` rows of this process's
 * subscriptions (re-creating any that were reaped while it stalled), moves the visibility deadline
 * of the rows its handlers still hold, and reaps expired instances of every process together with
 * the broadcast rows addressed to them, and expired dedupe keys.
 *
 * @module
 */

import type { Logger } from "@fw/runtime";
import type { SqlQueryable } from "../../_postgres.ts";
import type { ClaimLoop } from "./_claims.ts";
import type { SqlQueries } from "./_queries.ts";

/** What a heartbeat round needs. */
export interface HeartbeatContext {
  readonly sql: SqlQueryable;
  readonly queries: SqlQueries;
  readonly owner: string;
  readonly ttl: number;
  readonly visibility: number;
  readonly logger?: Logger;
}

/**
 * Runs one round.
 *
 * @param c Client, statements, owner and timings.
 * @param loops This process's subscriber instances.
 */
export async function heartbeat(c: HeartbeatContext, loops: readonly ClaimLoop[]): Promise<void> {
  const q = c.queries;
  if (loops.length > 0) {
    await c.sql.unsafe(q.beat, [
      loops.map((l) => l.spec.topic),
      loops.map((l) => l.spec.group),
      loops.map((l) => l.spec.instanceId),
      c.owner,
      c.ttl,
    ]);
  }
  const held = loops.flatMap((l) => l.inflight());
  if (held.length > 0) await c.sql.unsafe(q.extend, [held, c.visibility, c.owner]);
  const [reaped] = await c.sql.unsafe(q.reap);
  if (Number(reaped?.instances ?? 0) > 0) {
    c.logger?.warn("sql transport: reaped subscriber instances that stopped beating", {
      instances: Number(reaped.instances),
      messages: Number(reaped.messages),
    });
  }
}
