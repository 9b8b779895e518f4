/**
 * Internal to the Deno KV transport: the key layout under the key prefix and the shape of the
 * values it puts on the Deno KV queue.
 *
 * | Key | Value |
 * |---|---|
 * | `[prefix, "groups", topic, group]` | `{ distribution }`: a subscription group (durable) |
 * | `[prefix, "group-stamp", topic]` | a random id, new whenever a group of the topic is created or dropped |
 * | `[prefix, "instances", topic, group, instanceId]` | `{ expiresAt, owner }`: a live instance |
 * | `[prefix, "owners", owner]` | `{ expiresAt }`: a listening transport (one per handle) |
 * | `[prefix, "inbox", owner, qid]` | a message handed to that owner by another process |
 * | `[prefix, "parked", topic, group, qid]` | a queue message waiting for an instance of its group |
 * | `[prefix, "moved", qid]` | marker: this queue message was replaced by another (expires) |
 * | `[prefix, "moved", qid, part]` | marker: that part of a batch was replaced or handed on (expires) |
 * | `[prefix, "undelivered", qid]` | a queue message Deno KV gave up on (`keysIfUndelivered`) |
 * | `[prefix, "dedupe", topic, dedupeKey]` | marker: a publish with this key happened (expires) |
 * | `[prefix, "dead", order]` and `[prefix, "dead-count"]` | kept dead letters and their count |
 *
 * @module
 */

import type { Envelope } from "../../envelope.ts";

/** Marks queue values sent by an fw transport (the protocol of this file, version 1). */
export const MARK = "fw.events.denokv.v1";

/** What every queue message of the transport carries: whose it is and for which group. */
interface QueueMessageBase {
  readonly mark: typeof MARK;
  /** Key prefix of the transport that sent it. */
  readonly prefix: string;
  /** Unique id of this queue message (a retry or hand-on gets a new one). */
  readonly qid: string;
  readonly topic: string;
  readonly group: string;
  /** Broadcast only: the one instance it is for. */
  readonly instance?: string;
  /** 1-based delivery attempt (of every part, for a batch). */
  readonly attempt: number;
}

/** A message for one subscription group (or, for broadcast, one instance of it). */
export interface DeliverMessage extends QueueMessageBase {
  readonly kind: "deliver";
  readonly envelope: Envelope;
  /**
   * A delayed publish's due time (ms since the epoch): a message that reaches a listener before
   * then is queued again for the time left, so none is handed over early.
   */
  readonly due?: number;
}

/** One delayed envelope of a {@linkcode BatchMessage}. */
export interface BatchPart {
  readonly envelope: Envelope;
  /** Its due time (ms since the epoch). */
  readonly due: number;
}

/**
 * Delayed envelopes for one subscription group (or broadcast instance), published together and
 * due within a short span: one queue message, due at the first part's time, whose listener holds
 * the rest until each is due. Their deliveries are the parts' own: a retry or hand-on of a part
 * becomes a {@linkcode DeliverMessage} and marks that part as moved.
 */
export interface BatchMessage extends QueueMessageBase {
  readonly kind: "batch";
  /** In due order; at least two. */
  readonly parts: readonly BatchPart[];
}

/** A no-op message that makes the local SQLite queue look at the database again. */
export interface WakeMessage {
  readonly mark: typeof MARK;
  readonly kind: "wake";
  readonly prefix: string;
  readonly qid: string;
}

/** Everything an fw transport puts on the queue. */
export type QueueMessage = DeliverMessage | BatchMessage | WakeMessage;

/**
 * Whether a queue value was sent by an fw transport.
 *
 * @param value A value from `listenQueue`.
 * @returns `true` for one of ours.
 */
export function isQueueMessage(value: unknown): value is QueueMessage {
  if (typeof value !== "object" || value === null) return false;
  const m = value as Record<string, unknown>;
  if (m.mark !== MARK || typeof m.prefix !== "string" || typeof m.qid !== "string") return false;
  if (m.kind === "wake") return true;
  if (typeof m.topic !== "string" || typeof m.group !== "string") return false;
  if (typeof m.attempt !== "number") return false;
  return m.kind === "deliver" || (m.kind === "batch" && Array.isArray(m.parts));
}

/** A group's registry entry. */
export interface GroupRecord {
  readonly distribution: "competing" | "broadcast";
}

/** A listening transport's registry entry (renewed by its heartbeat). */
export interface OwnerRecord {
  /** Until when it counts as live (ms since the epoch). */
  readonly expiresAt: number;
}

/** An instance's registry entry (renewed by its owner's heartbeat). */
export interface InstanceRecord {
  /** Until when it counts as live (ms since the epoch). */
  readonly expiresAt: number;
  /** The transport (handle) that has it. */
  readonly owner: string;
}

/** Key builders for one prefix. */
export const keys = {
  groups: (p: string, topic: string): Deno.KvKey => [p, "groups", topic],
  group: (p: string, topic: string, group: string): Deno.KvKey => [p, "groups", topic, group],
  groupStamp: (p: string, topic: string): Deno.KvKey => [p, "group-stamp", topic],
  instances: (p: string, topic: string, group: string): Deno.KvKey => [
    p,
    "instances",
    topic,
    group,
  ],
  instance: (p: string, topic: string, group: string, id: string): Deno.KvKey => [
    p,
    "instances",
    topic,
    group,
    id,
  ],
  parkedOf: (p: string, topic: string, group: string): Deno.KvKey => [p, "parked", topic, group],
  parked: (p: string, topic: string, group: string, qid: string): Deno.KvKey => [
    p,
    "parked",
    topic,
    group,
    qid,
  ],
  owners: (p: string): Deno.KvKey => [p, "owners"],
  owner: (p: string, owner: string): Deno.KvKey => [p, "owners", owner],
  inboxAll: (p: string): Deno.KvKey => [p, "inbox"],
  inboxOf: (p: string, owner: string): Deno.KvKey => [p, "inbox", owner],
  inbox: (p: string, owner: string, qid: string): Deno.KvKey => [p, "inbox", owner, qid],
  moved: (p: string, qid: string): Deno.KvKey => [p, "moved", qid],
  movedParts: (p: string, qid: string): Deno.KvKey => [p, "moved", qid],
  movedPart: (p: string, qid: string, part: number): Deno.KvKey => [p, "moved", qid, part],
  undeliveredAll: (p: string): Deno.KvKey => [p, "undelivered"],
  undelivered: (p: string, qid: string): Deno.KvKey => [p, "undelivered", qid],
  dedupe: (p: string, topic: string, key: string): Deno.KvKey => [p, "dedupe", topic, key],
  deadAll: (p: string): Deno.KvKey => [p, "dead"],
  dead: (p: string, order: string): Deno.KvKey => [p, "dead", order],
  deadCount: (p: string): Deno.KvKey => [p, "dead-count"],
};

/**
 * A new queue message id.
 *
 * @returns A random UUID.
 */
export function newQid(): string {
  return crypto.randomUUID();
}
