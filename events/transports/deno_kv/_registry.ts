/**
 * Internal to the Deno KV transport: the records that let processes sharing a database find each
 * other (owners and instances, kept alive by heartbeats), and the background repairs that keep
 * messages from being stranded: parked messages go back on the queue when their group has an
 * instance again, messages Deno KV gave up on are queued again, and the inbox of an owner that
 * died is emptied back onto the queue.
 *
 * @module
 */

import type { Logger } from "@fw/runtime";
import type { SubscriptionSpec } from "../../transport.ts";
import {
  type BatchMessage,
  type DeliverMessage,
  type InstanceRecord,
  isQueueMessage,
  keys,
  newQid,
  type OwnerRecord,
  type QueueMessage,
} from "./_keys.ts";

/**
 * Runs a write, again when SQLite answers "database is locked": several handles (processes)
 * writing one database file at once get that error now and then, and the write is safe to redo.
 *
 * @param write Builds and commits the write (called once per try).
 * @returns Its result.
 */
export async function retryLocked<T>(write: () => Promise<T>): Promise<T> {
  for (let attempt = 1;; attempt++) {
    try {
      return await write();
    } catch (err) {
      if (attempt >= 20 || !String((err as Error)?.message).includes("database is locked")) {
        throw err;
      }
      await new Promise((r) => setTimeout(r, 2 + Math.random() * 8 * Math.min(attempt, 5)));
    }
  }
}

/** Options for `kv.enqueue`. */
export interface EnqueueOptions {
  delay?: number;
  keysIfUndelivered?: Deno.KvKey[];
  backoffSchedule?: number[];
}

/** A queue message that carries envelopes. */
export type CarryMessage = DeliverMessage | BatchMessage;

/** Builds the enqueue options of one message. */
export type EnqueueOptionsFn = (m: CarryMessage, delayMs: number) => EnqueueOptions;

/** A live instance of a group and the owner that has it. */
export interface LiveInstance {
  readonly id: string;
  readonly owner: string;
}

/** Writes the owner record and its instances' records with a new expiry. */
export async function beat(
  kv: Deno.Kv,
  p: string,
  owner: string,
  specs: readonly SubscriptionSpec[],
  expiresAt: number,
  ttl: number,
): Promise<void> {
  const ownerRecord: OwnerRecord = { expiresAt };
  const record: InstanceRecord = { expiresAt, owner };
  for (let i = 0; i === 0 || i < specs.length; i += 500) {
    await retryLocked(() => {
      const op = kv.atomic();
      if (i === 0) op.set(keys.owner(p, owner), ownerRecord, { expireIn: ttl });
      for (const s of specs.slice(i, i + 500)) {
        op.set(keys.instance(p, s.topic, s.group, s.instanceId), record, { expireIn: ttl });
      }
      return op.commit();
    });
  }
}

/** The instances of a group whose heartbeat has not expired. */
export async function liveInstances(
  kv: Deno.Kv,
  p: string,
  topic: string,
  group: string,
  now: number,
): Promise<LiveInstance[]> {
  const out: LiveInstance[] = [];
  for await (const e of kv.list<InstanceRecord>({ prefix: keys.instances(p, topic, group) })) {
    if (e.value.expiresAt > now) out.push({ id: e.key[4] as string, owner: e.value.owner });
  }
  return out;
}

/** Moves a stored message (parked, undelivered, in an inbox) back onto the queue, once. */
export async function requeue<M extends CarryMessage>(
  kv: Deno.Kv,
  entry: Deno.KvEntry<M>,
  next: M,
  enqueueOptions: EnqueueOptionsFn,
): Promise<boolean> {
  // The check makes two processes doing this at once enqueue it only once.
  const r = await retryLocked(() =>
    kv.atomic().check(entry).delete(entry.key).enqueue(next, enqueueOptions(next, 0)).commit()
  );
  return r.ok;
}

/** Queues the parked messages of a competing group. */
export async function unpark(
  kv: Deno.Kv,
  p: string,
  topic: string,
  group: string,
  enqueueOptions: EnqueueOptionsFn,
): Promise<void> {
  for await (const e of kv.list<DeliverMessage>({ prefix: keys.parkedOf(p, topic, group) })) {
    await requeue(kv, e, { ...e.value, qid: newQid() }, enqueueOptions);
  }
}

/**
 * Queues again the messages Deno KV gave up on (its back-off schedule ran out, for example
 * because consumers died holding them), counting that as a failed attempt.
 */
export async function sweepUndelivered(
  kv: Deno.Kv,
  p: string,
  enqueueOptions: EnqueueOptionsFn,
  logger?: Logger,
): Promise<void> {
  for await (const e of kv.list<QueueMessage>({ prefix: keys.undeliveredAll(p) })) {
    const m = e.value;
    if (!isQueueMessage(m) || m.kind === "wake") {
      await retryLocked(() => kv.delete(e.key));
      continue;
    }
    const next: CarryMessage = { ...m, qid: newQid(), attempt: m.attempt + 1 };
    if (await requeue(kv, e as Deno.KvEntry<CarryMessage>, next, enqueueOptions)) {
      const envelope = m.kind === "batch" ? m.parts[0]?.envelope : m.envelope;
      logger?.warn("deno kv: queued again a message Deno KV could not deliver", {
        traceId: envelope?.traceId,
        topic: m.topic,
        group: m.group,
        messageId: envelope?.id,
        ...(m.kind === "batch" ? { messages: m.parts.length } : {}),
        attempt: next.attempt,
      });
    }
  }
}

/**
 * Queues the inbox entries of owners that are gone (closed, or died without closing), or of one
 * owner when `only` is given.
 */
export async function recoverInboxes(
  kv: Deno.Kv,
  p: string,
  now: number,
  enqueueOptions: EnqueueOptionsFn,
  only?: string,
): Promise<void> {
  const alive = new Map<string, boolean>();
  const prefix = only === undefined ? keys.inboxAll(p) : keys.inboxOf(p, only);
  for await (const e of kv.list<DeliverMessage>({ prefix })) {
    const owner = e.key[2] as string;
    let live = only === undefined ? alive.get(owner) : false;
    if (live === undefined) {
      const record = await kv.get<OwnerRecord>(keys.owner(p, owner));
      alive.set(owner, live = (record.value?.expiresAt ?? 0) > now);
    }
    if (!live) await requeue(kv, e, { ...e.value, qid: newQid() }, enqueueOptions);
  }
}
