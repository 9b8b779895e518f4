/**
 * Internal to the Deno KV transport: the one queue listener of a database handle and the
 * dispatch of what it receives to the subscriptions of this process.
 *
 * A received message goes to a local instance of its group (round-robin for competing groups,
 * the addressed instance for broadcast). A message for a group with no instance here is handed
 * on (enqueued again after a short delay, for another process) while the group has a live
 * instance somewhere, else parked in KV until one joins; a broadcast message for an instance that
 * has gone is dropped with a warning. Every "replace this queue message with another" write also
 * sets a `moved` marker for the old one, in the same atomic commit, so a copy Deno KV redelivers
 * after a crash is recognised and skipped.
 *
 * @module
 */

import type { Clock, Logger } from "@fw/runtime";
import type { Admission, Delivery, DeliveryListener, SubscriptionSpec } from "../transport.ts";
import {
  type DeliverMessage,
  type InstanceRecord,
  isQueueMessage,
  keys,
  MARK,
  newQid,
  type QueueMessage,
  type WakeMessage,
} from "./_deno_kv_keys.ts";

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

/** Options for `kv.enqueue`. */
export interface EnqueueOptions {
  delay?: number;
  keysIfUndelivered?: Deno.KvKey[];
  backoffSchedule?: number[];
}

/** What the dispatcher needs from its transport. */
export interface KvDispatcherOptions {
  kv: () => Promise<Deno.Kv>;
  prefix: string;
  /** Identifies the database within this process (see `inflight`). */
  database: string;
  clock: Clock;
  enqueueOptions: (m: DeliverMessage, delayMs: number) => EnqueueOptions;
  foreignMessage?: (value: unknown) => void | Promise<void>;
  logger?: Logger;
}

type Settle = { resolve: () => void; reject: (err: unknown) => void };

/**
 * Queue messages being handled in this process, by database and queue message id. Deno KV's
 * SQLite backend hands a message out again when it has been running for more than about five
 * seconds and a handle opens the database or runs its once-a-minute clean-up, although its
 * first delivery is still running. The copy waits here for the first one and ends as it does.
 */
const inflight = new Map<string, Settle[]>();

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
  readonly #held = new Set<Settle>();
  #started = false;
  #closed = false;

  constructor(options: KvDispatcherOptions) {
    this.#o = options;
  }

  enqueueOptions(m: DeliverMessage, delayMs: number): EnqueueOptions {
    return this.#o.enqueueOptions(m, delayMs);
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

  instances(): LocalInstance[] {
    return [...this.#groups.values()].flatMap((g) => g.instances);
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

  /** Stops local dispatch; unfinished deliveries go back to Deno KV for redelivery. */
  close(): void {
    this.#closed = true;
    for (const g of this.#groups.values()) for (const i of g.instances) i.closed = true;
    this.#groups.clear();
    const err = new Error(
      "Handed back to Deno KV for redelivery: the transport closed before the delivery finished",
    );
    for (const h of this.#held) h.reject(err);
    this.#held.clear();
  }

  /** Writes the instance records with a new expiry. */
  async beat(kv: Deno.Kv, list: LocalInstance[], expiresAt: number, ttl: number): Promise<void> {
    const p = this.#o.prefix;
    const record: InstanceRecord = { expiresAt };
    for (let i = 0; i < list.length; i += 500) {
      const op = kv.atomic();
      for (const { spec: s } of list.slice(i, i + 500)) {
        op.set(keys.instance(p, s.topic, s.group, s.instanceId), record, { expireIn: ttl });
      }
      await op.commit();
    }
  }

  /** Deletes the instance records. */
  async unregister(kv: Deno.Kv, list: LocalInstance[]): Promise<void> {
    const p = this.#o.prefix;
    for (const { spec: s } of list) {
      await kv.delete(keys.instance(p, s.topic, s.group, s.instanceId));
    }
  }

  /** Ids of a group's instances whose heartbeat has not expired. */
  async liveInstances(
    kv: Deno.Kv,
    p: string,
    topic: string,
    group: string,
    now: number,
  ): Promise<string[]> {
    const out: string[] = [];
    for await (const e of kv.list<InstanceRecord>({ prefix: keys.instances(p, topic, group) })) {
      if (e.value.expiresAt > now) out.push(e.key[4] as string);
    }
    return out;
  }

  /** Enqueues the parked messages of every competing group with an instance here. */
  async unparkLocal(kv: Deno.Kv): Promise<void> {
    const p = this.#o.prefix;
    for (const g of [...this.#groups.values()]) {
      const s = g.instances[0]?.spec;
      if (!s || s.distribution !== "competing") continue;
      for await (
        const e of kv.list<DeliverMessage>({ prefix: keys.parkedOf(p, s.topic, s.group) })
      ) {
        const next: DeliverMessage = { ...e.value, qid: newQid(), hops: 0 };
        // The check makes two processes unparking at once enqueue it only once.
        await kv.atomic().check(e).delete(e.key).enqueue(next, this.enqueueOptions(next, 0))
          .commit();
      }
    }
  }

  /**
   * Enqueues again the messages Deno KV gave up on (its back-off schedule ran out, for example
   * because consumers died holding them), counting that as a failed attempt.
   */
  async sweepUndelivered(kv: Deno.Kv): Promise<void> {
    for await (const e of kv.list<QueueMessage>({ prefix: keys.undeliveredAll(this.#o.prefix) })) {
      const m = e.value;
      if (!isQueueMessage(m) || m.kind !== "deliver") {
        await kv.delete(e.key);
        continue;
      }
      const next: DeliverMessage = { ...m, qid: newQid(), attempt: m.attempt + 1, hops: 0 };
      const r = await kv.atomic().check(e).delete(e.key).enqueue(next, this.enqueueOptions(next, 0))
        .commit();
      if (r.ok) {
        this.#o.logger?.warn("deno kv: queued again a message Deno KV could not deliver", {
          traceId: m.envelope?.traceId,
          topic: m.topic,
          group: m.group,
          messageId: m.envelope?.id,
          attempt: next.attempt,
        });
      }
    }
  }

  /** Makes the local SQLite queue re-read the database (it sees other processes' enqueues). */
  async wake(kv: Deno.Kv): Promise<void> {
    const m: WakeMessage = { mark: MARK, kind: "wake", prefix: this.#o.prefix, qid: newQid() };
    await kv.enqueue(m);
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
    const waiters: Settle[] = [];
    inflight.set(id, waiters);
    const run = this.#handle(value);
    run.then(
      () => waiters.forEach((w) => w.resolve()),
      (err) => waiters.forEach((w) => w.reject(err)),
    ).finally(() => inflight.delete(id));
    return run;
  }

  async #handle(msg: DeliverMessage): Promise<void> {
    const kv = await this.#o.kv();
    if ((await kv.get(keys.moved(msg.prefix, msg.qid))).versionstamp !== null) return;
    const local = msg.prefix === this.#o.prefix && !this.#closed
      ? this.#groups.get(groupId(msg.topic, msg.group))
      : undefined;
    const now = this.#o.clock.now();
    if (msg.instance !== undefined) {
      const instance = local?.instances.find((i) => i.spec.instanceId === msg.instance);
      if (instance) return this.#offer(msg, [instance]);
      const live = await this.liveInstances(kv, msg.prefix, msg.topic, msg.group, now);
      if (live.includes(msg.instance)) return this.#handOn(msg);
      this.#o.logger?.warn("deno kv: broadcast delivery skipped: the instance left", {
        traceId: msg.envelope?.traceId,
        topic: msg.topic,
        group: msg.group,
        messageId: msg.envelope?.id,
      });
      return;
    }
    if (local && local.instances.length > 0) {
      const n = local.instances.length;
      const start = local.next % n;
      local.next = (start + 1) % n;
      return this.#offer(msg, [
        ...local.instances.slice(start),
        ...local.instances.slice(0, start),
      ]);
    }
    if ((await this.liveInstances(kv, msg.prefix, msg.topic, msg.group, now)).length > 0) {
      return this.#handOn(msg);
    }
    await this.#park(kv, msg);
  }

  /** Offers to the candidates in turn; settles when the consumer acked or retried. */
  #offer(msg: DeliverMessage, candidates: LocalInstance[]): Promise<void> {
    return new Promise<void>((resolve, reject) => {
      const held: Settle = {
        resolve: () => {
          this.#held.delete(held);
          resolve();
        },
        reject: (err) => {
          this.#held.delete(held);
          reject(err);
        },
      };
      this.#held.add(held);
      for (const instance of candidates) {
        let done = false;
        const delivery: Delivery = {
          envelope: msg.envelope,
          attempt: msg.attempt,
          ack: () => {
            if (!done) {
              done = true;
              held.resolve();
            }
            return Promise.resolve();
          },
          retry: async (delayMs: number) => {
            if (done) return;
            done = true;
            const next: DeliverMessage = {
              ...msg,
              qid: newQid(),
              attempt: msg.attempt + 1,
              hops: 0,
            };
            try {
              await this.#replace(msg, next, delayMs);
              held.resolve();
            } catch (err) {
              // Deno KV redelivers the original (same attempt): nothing is lost.
              this.#o.logger?.warn("deno kv: could not schedule a retry", { error: err });
              held.reject(err);
            }
          },
        };
        let admission: Admission;
        try {
          admission = instance.listener(delivery);
        } catch (err) {
          done = true;
          held.reject(err);
          return;
        }
        if (admission === "accepted") return;
        if (admission === "dropped") {
          if (!done) held.resolve();
          done = true;
          return;
        }
        done = true; // Rejected (queue full): the next local instance may take it.
      }
      const again: DeliverMessage = { ...msg, qid: newQid() };
      this.#replace(msg, again, REFUSED_RETRY_MS).then(held.resolve, held.reject);
    });
  }

  /** Enqueues `next` and marks `msg` as moved, in one commit. */
  async #replace(msg: DeliverMessage, next: DeliverMessage, delayMs: number): Promise<void> {
    const kv = await this.#o.kv();
    await kv.atomic()
      .enqueue(next, this.enqueueOptions(next, delayMs))
      .set(keys.moved(msg.prefix, msg.qid), true, { expireIn: MOVED_TTL_MS })
      .commit();
  }

  /**
   * For another process. Which process dequeues it is up to Deno KV, so it may come back here:
   * each hop waits a little longer (15 ms growing by half up to 1 s), to keep a group whose
   * only instance has just died from turning into a busy loop until its heartbeat expires.
   */
  #handOn(msg: DeliverMessage): Promise<void> {
    const hops = msg.hops + 1;
    const base = Math.min(10 * 1.5 ** Math.min(hops, 12), 1000);
    return this.#replace(msg, { ...msg, qid: newQid(), hops }, base * (1 + Math.random() / 2));
  }

  async #park(kv: Deno.Kv, msg: DeliverMessage): Promise<void> {
    await kv.atomic()
      .set(keys.parked(msg.prefix, msg.topic, msg.group, msg.qid), msg)
      .set(keys.moved(msg.prefix, msg.qid), true, { expireIn: MOVED_TTL_MS })
      .commit();
  }
}
