/**
 * Internal to the Deno KV transport: the one queue listener of a database handle and the
 * dispatch of what it receives to the subscriptions of this process.
 *
 * Deno KV has one queue per database and hands each message to whichever listening process
 * dequeues it first. A message for a group with an instance here goes to it (round-robin for a
 * competing group, the addressed instance for broadcast). Otherwise, when the group has a live
 * instance in another process, the message is handed on to that process: written to its inbox
 * in KV, which it polls; when the group has no live instance anywhere, a competing message is
 * parked in KV until one joins, and a broadcast message for an instance that has gone is
 * dropped with a warning. Whatever replaces a queue message also sets a `moved` marker for it
 * in the same atomic commit, so a copy Deno KV redelivers after a crash is skipped.
 *
 * @module
 */

import type { Clock, Logger } from "@fw/runtime";
import type { Admission, Delivery, DeliveryListener, SubscriptionSpec } from "../../transport.ts";
import {
  type BatchMessage,
  type DeliverMessage,
  isQueueMessage,
  keys,
  MARK,
  newQid,
  type WakeMessage,
} from "./_keys.ts";
import { type EnqueueOptionsFn, liveInstances, requeue, retryLocked, unpark } from "./_registry.ts";

/** One subscriber instance in this process. */
export interface LocalInstance {
  readonly spec: SubscriptionSpec;
  readonly listener: DeliveryListener;
  closed: boolean;
}

interface LocalGroup {
  instances: LocalInstance[];
  next: number;
}

/** What the dispatcher needs from its transport. */
export interface KvDispatcherOptions {
  kv: () => Promise<Deno.Kv>;
  prefix: string;
  /** Identifies the database within this process (see `inflight`). */
  database: string;
  /** This transport's id in the owner registry. */
  owner: string;
  clock: Clock;
  enqueueOptions: EnqueueOptionsFn;
  foreignMessage?: (value: unknown) => void | Promise<void>;
  logger?: Logger;
}

/** How a delivery's outcome is written back, depending on where the message came from. */
interface Settlement {
  /** The consumer acknowledged (or dropped) it. */
  done(): Promise<void>;
  /** Replaces it by `next`, due after `delayMs`: a retry, or a refused delivery offered again. */
  replace(next: DeliverMessage, delayMs: number): Promise<void>;
}

type Waiter = { resolve: () => void; reject: (err: unknown) => void };

/**
 * Queue messages being handled in this process, by database and queue message id. Deno KV's
 * SQLite backend hands a message out again when it is more than about five seconds overdue and a
 * handle opens the database or runs its once-a-minute clean-up, although its first delivery is
 * still running. Such a copy waits here for the first one and ends as it does.
 */
const inflight = new Map<string, Waiter[]>();

/** How long a refused delivery (queue full) waits before it is offered again. */
const REFUSED_RETRY_MS = 1000;
/** How long `moved` markers are kept. */
const MOVED_TTL_MS = 24 * 3600_000;

const groupId = (topic: string, group: string) => `${topic}\u0000${group}`;

/** The queue listener and local dispatch of one transport. */
export class KvDispatcher {
  /** Resolves when the queue listener has stopped (the handle closed). */
  listening: Promise<void> = Promise.resolve();
  readonly #o: KvDispatcherOptions;
  readonly #groups = new Map<string, LocalGroup>();
  readonly #held = new Set<(err: Error) => void>();
  readonly #fromInbox = new Set<string>();
  /** Batches being delivered, by queue message id, with the indexes of their settled parts. */
  readonly #batches = new Map<string, { prefix: string; qid: string; settled: Set<number> }>();
  #started = false;
  #closed = false;

  constructor(options: KvDispatcherOptions) {
    this.#o = options;
  }

  add(instance: LocalInstance): void {
    const id = groupId(instance.spec.topic, instance.spec.group);
    let g = this.#groups.get(id);
    if (!g) this.#groups.set(id, g = { instances: [], next: 0 });
    g.instances.push(instance);
  }

  remove(instance: LocalInstance): void {
    instance.closed = true;
    const id = groupId(instance.spec.topic, instance.spec.group);
    const g = this.#groups.get(id);
    if (!g) return;
    g.instances = g.instances.filter((i) => i !== instance);
    if (g.instances.length === 0) this.#groups.delete(id);
  }

  /** The subscriptions of this process. */
  specs(): SubscriptionSpec[] {
    return [...this.#groups.values()].flatMap((g) => g.instances.map((i) => i.spec));
  }

  /** Starts the handle's queue listener (once). */
  listen(kv: Deno.Kv): void {
    if (this.#started) return;
    this.#started = true;
    this.listening = kv.listenQueue((value) => this.#receive(value)).catch((err) => {
      if (!this.#closed) {
        this.#o.logger?.error("deno kv: the queue listener failed", { error: err });
      }
    });
  }

  /**
   * Stops local dispatch; unfinished deliveries go back to Deno KV for redelivery. With the
   * database handle, the parts of held batches that are already settled are first marked as
   * moved, so the redelivered batch brings only the others.
   */
  async close(kv?: Deno.Kv): Promise<void> {
    this.#closed = true;
    for (const g of this.#groups.values()) for (const i of g.instances) i.closed = true;
    this.#groups.clear();
    const settled = [...this.#batches.values()].flatMap((b) =>
      [...b.settled].map((i) => keys.movedPart(b.prefix, b.qid, i))
    );
    this.#batches.clear();
    for (let i = 0; kv && i < settled.length; i += 500) {
      const chunk = settled.slice(i, i + 500);
      await retryLocked(() => {
        const op = kv.atomic();
        for (const key of chunk) op.set(key, true, { expireIn: MOVED_TTL_MS });
        return op.commit();
      }).catch((err) =>
        this.#o.logger?.warn("deno kv: could not mark settled parts of a batch", { error: err })
      );
    }
    const err = new Error(
      "Handed back to Deno KV for redelivery: the transport closed before the delivery finished",
    );
    for (const abandon of this.#held) abandon(err);
    this.#held.clear();
  }

  /** Makes the local SQLite queue re-read the database (it sees other processes' enqueues). */
  async wake(kv: Deno.Kv): Promise<void> {
    const m: WakeMessage = { mark: MARK, kind: "wake", prefix: this.#o.prefix, qid: newQid() };
    await retryLocked(() => kv.enqueue(m));
  }

  /** Offers what other processes handed to this one; each entry stays until it is settled. */
  async pollInbox(kv: Deno.Kv): Promise<void> {
    const p = this.#o.prefix;
    for await (const e of kv.list<DeliverMessage>({ prefix: keys.inboxOf(p, this.#o.owner) })) {
      if (this.#closed) return;
      const msg = e.value;
      if (this.#fromInbox.has(msg.qid)) continue;
      const candidates = this.#candidates(msg);
      if (candidates.length === 0) {
        // The instance left in the meantime: routed afresh from the queue.
        await requeue(kv, e, { ...msg, qid: newQid() }, this.#o.enqueueOptions);
        continue;
      }
      this.#fromInbox.add(msg.qid);
      this.#offer(msg, candidates, {
        done: async () => void await retryLocked(() => kv.atomic().check(e).delete(e.key).commit()),
        replace: async (next, delayMs) =>
          void await retryLocked(() =>
            kv.atomic().check(e).delete(e.key)
              .enqueue(next, this.#o.enqueueOptions(next, delayMs)).commit()
          ),
      }).catch(() => {
        // Left in the inbox: offered again by the next poll, or queued again when this closes.
      }).finally(() => this.#fromInbox.delete(msg.qid));
    }
  }

  #receive(value: unknown): void | Promise<void> {
    if (!isQueueMessage(value)) {
      if (this.#o.foreignMessage) return this.#o.foreignMessage(value);
      this.#o.logger?.warn("deno kv: dropped a queue message that fw did not send", {
        type: typeof value,
      });
      return;
    }
    if (value.kind === "wake") return;
    const id = `${this.#o.database}\u0000${value.qid}`;
    const waiting = inflight.get(id);
    if (waiting) return new Promise((resolve, reject) => waiting.push({ resolve, reject }));
    const waiters: Waiter[] = [];
    inflight.set(id, waiters);
    const run = this.#handle(value);
    run.then(
      () => waiters.forEach((w) => w.resolve()),
      (err) => waiters.forEach((w) => w.reject(err)),
    ).finally(() => inflight.delete(id));
    return run;
  }

  /** Local instances that may take the message, in the order to try them. */
  #candidates(msg: DeliverMessage): LocalInstance[] {
    if (msg.prefix !== this.#o.prefix || this.#closed) return [];
    const local = this.#groups.get(groupId(msg.topic, msg.group));
    if (!local || local.instances.length === 0) return [];
    if (msg.instance !== undefined) {
      return local.instances.filter((i) => i.spec.instanceId === msg.instance);
    }
    const n = local.instances.length;
    const start = local.next % n;
    local.next = (start + 1) % n;
    return [...local.instances.slice(start), ...local.instances.slice(0, start)];
  }

  async #handle(msg: DeliverMessage | BatchMessage): Promise<void> {
    const kv = await this.#o.kv();
    if (msg.kind === "batch") return this.#handleBatch(kv, msg);
    if ((await kv.get(keys.moved(msg.prefix, msg.qid))).versionstamp !== null) return;
    const early = (msg.due ?? 0) - this.#o.clock.now();
    if (early > 0) {
      // A delayed publish the queue handed over before its time: queued again for the rest.
      const next = { ...msg, qid: newQid() };
      await retryLocked(() => kv.enqueue(next, this.#o.enqueueOptions(next, early)));
      return;
    }
    await this.#dispatch(kv, msg, keys.moved(msg.prefix, msg.qid));
  }

  /**
   * A batch of delayed envelopes: each part not moved by an earlier delivery of this queue
   * message is held until its due time, then dispatched as a message of its own whose retry or
   * hand-on marks the part as moved. Settles when every part has.
   */
  async #handleBatch(kv: Deno.Kv, msg: BatchMessage): Promise<void> {
    const moved = new Set<unknown>();
    for await (const e of kv.list({ prefix: keys.movedParts(msg.prefix, msg.qid) })) {
      moved.add(e.key[3]);
    }
    const parts = msg.parts.map((part, i) => ({ part, i })).filter(({ i }) => !moved.has(i));
    if (parts.length === 0) return;
    const early = parts[0].part.due - this.#o.clock.now();
    if (early > 0) {
      // Handed over before its time: queued again for the rest, without the moved parts.
      const next: BatchMessage = { ...msg, qid: newQid(), parts: parts.map(({ part }) => part) };
      await retryLocked(() => kv.enqueue(next, this.#o.enqueueOptions(next, early)));
      return;
    }
    const { parts: _, kind: __, ...base } = msg;
    const held = { prefix: msg.prefix, qid: msg.qid, settled: new Set<number>() };
    this.#batches.set(msg.qid, held);
    try {
      await Promise.all(parts.map(async ({ part, i }) => {
        await this.#until(part.due);
        const single: DeliverMessage = {
          ...base,
          kind: "deliver",
          qid: `${msg.qid}:${i}`,
          envelope: part.envelope,
          due: part.due,
        };
        await this.#dispatch(kv, single, keys.movedPart(msg.prefix, msg.qid, i));
        held.settled.add(i);
      }));
    } finally {
      this.#batches.delete(msg.qid);
    }
  }

  /** Resolves at `due` on the transport's clock; rejects when the transport closes first. */
  #until(due: number): Promise<void> {
    const wait = due - this.#o.clock.now();
    if (wait <= 0) return Promise.resolve();
    return new Promise<void>((resolve, reject) => {
      const abandon = (err: unknown) => {
        this.#o.clock.clearTimeout(timer);
        this.#held.delete(abandon);
        reject(err);
      };
      const timer = this.#o.clock.setTimeout(() => {
        this.#held.delete(abandon);
        resolve();
      }, wait);
      this.#held.add(abandon);
    });
  }

  /**
   * Hands a due message to a local instance, else on to a process that has one, else parks it
   * (competing) or drops it (a broadcast instance that left). `marker` is set in the same commit
   * as whatever replaces the message, so a copy redelivered after a crash is skipped.
   */
  async #dispatch(kv: Deno.Kv, msg: DeliverMessage, marker: Deno.KvKey): Promise<void> {
    const candidates = this.#candidates(msg);
    if (candidates.length > 0) {
      return this.#offer(msg, candidates, {
        done: () => Promise.resolve(),
        replace: (next, delayMs) => this.#replace(kv, marker, next, delayMs),
      });
    }
    const now = this.#o.clock.now();
    const live = (await liveInstances(kv, msg.prefix, msg.topic, msg.group, now))
      .filter((i) => i.owner !== this.#o.owner && (msg.instance ?? i.id) === i.id);
    if (live.length > 0) {
      const target = live[Math.floor(Math.random() * live.length)].owner;
      await this.#moveTo(kv, marker, msg, keys.inbox(msg.prefix, target, msg.qid));
    } else if (msg.instance === undefined) {
      const key = keys.parked(msg.prefix, msg.topic, msg.group, msg.qid);
      await this.#moveTo(kv, marker, msg, key);
      // An instance that joined between the look above and the park has already queued its
      // group's parked messages (it registers, then unparks), so this one would wait for the next
      // repair round. Look again after parking: of the two, at least one sees the other's write.
      const now = this.#o.clock.now();
      if ((await liveInstances(kv, msg.prefix, msg.topic, msg.group, now)).length > 0) {
        await unpark(kv, msg.prefix, msg.topic, msg.group, this.#o.enqueueOptions);
      }
    } else {
      this.#o.logger?.warn("deno kv: broadcast delivery skipped: the instance left", {
        traceId: msg.envelope?.traceId,
        topic: msg.topic,
        group: msg.group,
        messageId: msg.envelope?.id,
      });
    }
  }

  /**
   * Offers to the candidates in turn. Settles when the consumer acked or retried (or every
   * candidate refused and the message was offered again later); rejects when the outcome could
   * not be written or the transport closed first.
   */
  #offer(msg: DeliverMessage, candidates: LocalInstance[], settle: Settlement): Promise<void> {
    return new Promise<void>((resolve, reject) => {
      const abandon = (err: unknown) => {
        this.#held.delete(abandon);
        reject(err);
      };
      const finish = (write: Promise<void>): Promise<void> =>
        write.then(() => {
          this.#held.delete(abandon);
          resolve();
        }, (err) => {
          this.#o.logger?.warn("deno kv: could not record a delivery outcome", { error: err });
          abandon(err);
        });
      this.#held.add(abandon);
      for (const instance of candidates) {
        let done = false;
        const delivery: Delivery = {
          envelope: msg.envelope,
          attempt: msg.attempt,
          ack: () => {
            if (done) return Promise.resolve();
            done = true;
            return finish(settle.done());
          },
          retry: (delayMs: number) => {
            if (done) return Promise.resolve();
            done = true;
            return finish(
              settle.replace({ ...msg, qid: newQid(), attempt: msg.attempt + 1 }, delayMs),
            );
          },
        };
        let admission: Admission;
        try {
          admission = instance.listener(delivery);
        } catch (err) {
          done = true;
          abandon(err);
          return;
        }
        if (admission === "accepted") return;
        if (admission === "dropped") {
          if (!done) void finish(settle.done());
          done = true;
          return;
        }
        done = true; // Refused (queue full): the next local instance may take it.
      }
      void finish(settle.replace({ ...msg, qid: newQid() }, REFUSED_RETRY_MS));
    });
  }

  /** Enqueues `next` and sets the replaced message's `marker`, in one commit. */
  async #replace(
    kv: Deno.Kv,
    marker: Deno.KvKey,
    next: DeliverMessage,
    delayMs: number,
  ): Promise<void> {
    await retryLocked(() =>
      kv.atomic()
        .enqueue(next, this.#o.enqueueOptions(next, delayMs))
        .set(marker, true, { expireIn: MOVED_TTL_MS })
        .commit()
    );
  }

  /** Stores `msg` under `key` (an inbox, or parked) and sets `marker`, in one commit. */
  async #moveTo(
    kv: Deno.Kv,
    marker: Deno.KvKey,
    msg: DeliverMessage,
    key: Deno.KvKey,
  ): Promise<void> {
    await retryLocked(() =>
      kv.atomic().set(key, msg).set(marker, true, { expireIn: MOVED_TTL_MS }).commit()
    );
  }
}
