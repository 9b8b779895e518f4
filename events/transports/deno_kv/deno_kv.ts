/**
 * `denoKvTransport({ path })`: a persistent transport on a Deno KV queue (`enqueue` /
 * `listenQueue`), on a local SQLite file or on Deno Deploy's managed KV unchanged.
 *
 * - A publish enqueues one queue message per competing group of its topic and one per live
 *   instance of each broadcast group. The groups are read from KV once and reused while the
 *   topic's group stamp (a key rewritten whenever a group is created or dropped) is unchanged:
 *   each commit checks it, and a failed check plans the publish again from a fresh read.
 *   Publishes that arrive while a commit is in flight share the next commit (group commit).
 * - Delayed publishes of one event-loop turn are written together, and those for one group due
 *   within 100 ms of each other share one queue message (a batch) that the receiving listener
 *   holds until each part is due.
 * - Each transport holds its handle's queue listener and dispatches to the subscriptions of its
 *   process (`_dispatch.ts`). A message for a group with no instance here is handed to a
 *   process that has one (through that process's inbox in KV, which it polls), or parked in KV
 *   until an instance of its group joins.
 * - The listener's callback settles only when the consumer acknowledged or retried, so a killed
 *   process leaves the message with Deno KV, which redelivers it. A retry enqueues a copy with
 *   `delay` and `attempt + 1`: the retry schedule is the consumer's, not Deno KV's five steps.
 * - Dead letters with no `<topic>.dlq` subscriber are kept in KV ({@linkcode DenoKvDeadLetters}).
 *
 * @module
 */

import type { Clock, TimerHandle } from "@fw/runtime";
import type { Envelope } from "../../envelope.ts";
import type {
  DeliveryListener,
  QueueStats,
  Subscription,
  SubscriptionSpec,
  Transport,
  TransportCapabilities,
  TransportPublishOptions,
} from "../../transport.ts";
import {
  type BatchMessage,
  type DeliverMessage,
  type GroupRecord,
  keys,
  MARK,
  newQid,
} from "./_keys.ts";
import { KvDispatcher, type LocalInstance } from "./_dispatch.ts";
import { inspectDenoKv } from "./_inspect.ts";
import { DENOKV_MAX_DELAY_MS, type ResolvedOptions, resolveOptions } from "./_options.ts";
import {
  beat,
  liveInstances,
  recoverInboxes,
  retryLocked,
  sweepUndelivered,
  unpark,
} from "./_registry.ts";
import { DenoKvDeadLetters } from "./dead_letters.ts";
import { DenoKvScheduleStore } from "./_schedule.ts";
import type { ScheduleStore } from "../../schedule/store.ts";
import type { DenoKvTransportOptions } from "./_options.ts";

export type { DenoKvTransportOptions } from "./_options.ts";

/** At most this many enqueues per atomic commit (Deno KV allows 1000 mutations). */
const CHUNK = 500;
/** When a listening transport opens its file once more to recover abandoned messages. */
const RECOVERY_PROBE_MS = 5500;
/**
 * How long a publishing transport reuses a topic's group list; the group stamp check makes a
 * change visible at once, this bounds how long a writer that does not bump the stamp goes unseen.
 */
const GROUP_CACHE_MS = 10_000;
/** Delayed envelopes of one flush due within this span of the first share one queue message. */
const BATCH_SPAN_MS = 100;
/** At most this many envelopes in one queue message. */
const BATCH_MAX = 100;
/** Estimated size cap of one queue message (Deno KV takes at most 64 KiB per value). */
const BATCH_BYTES = 48_000;
/** Estimated size cap of one atomic commit (Deno KV takes at most 800 KiB). */
const COMMIT_BYTES = 400_000;

/** A delayed publish waiting for the flush of its turn. */
interface PendingDelayed {
  readonly envelope: Envelope;
  readonly due: number;
  readonly size: number;
  readonly resolve: () => void;
  readonly reject: (err: unknown) => void;
}

/** A plain publish waiting for the next group commit. */
interface PendingPlain {
  readonly envelope: Envelope;
  readonly size: number;
  readonly resolve: () => void;
  readonly reject: (err: unknown) => void;
}

/** A topic's targets as of its group stamp's versionstamp (null: no group ever changed). */
interface TopicTargets {
  readonly stamp: string | null;
  readonly targets: Target[];
  /** When they were read (transport clock). */
  readonly at: number;
}

/** Where a topic's messages go: a competing group, or one live instance of a broadcast group. */
interface Target {
  readonly group: string;
  readonly instance?: string;
}

/** A conservative guess of an envelope's size in a queue message, or undefined. */
function sizeOf(envelope: Envelope): number | undefined {
  try {
    return 2 * JSON.stringify(envelope).length + 64;
  } catch {
    return undefined;
  }
}

/**
 * The Deno KV transport. Create it with {@linkcode denoKvTransport}.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { DenoKvTransport } from "@fw/events/denokv";
 * const t = new DenoKvTransport({ path: ":memory:" });
 * assert.deepEqual(t.capabilities, {
 *   ordering: false,
 *   persistent: false,
 *   external: true,
 *   admission: false,
 *   maxDelay: 30 * 24 * 3600_000,
 * });
 * await t.close();
 * ```
 */
export class DenoKvTransport implements Transport {
  /** `denokv`. */
  readonly name: string = "denokv";
  /** Unordered, external, no admission at publish; persistent unless the path is `:memory:`. */
  readonly capabilities: TransportCapabilities;
  /** Dead letters kept in KV. */
  readonly deadLetters: DenoKvDeadLetters;
  readonly #o: ResolvedOptions;
  readonly #prefix: string;
  readonly #owner = crypto.randomUUID();
  readonly #clock: Clock;
  readonly #dispatcher: KvDispatcher;
  readonly #timers = new Set<TimerHandle>();
  #opening: Promise<Deno.Kv> | undefined;
  #timersStarted = false;
  #closed = false;

  /**
   * Checks the options; the database opens on first use.
   *
   * @param options Database, key prefix, timings and services.
   * @throws {TypeError} For both `path` and `kv`, an empty `keyPrefix` or a bad number.
   * @throws {Error} When Deno KV is not enabled (`--unstable-kv`).
   */
  constructor(options: DenoKvTransportOptions = {}) {
    const o = this.#o = resolveOptions(options);
    this.#prefix = o.prefix;
    this.#clock = o.clock;
    this.capabilities = {
      ordering: false,
      persistent: o.path !== ":memory:",
      external: true,
      admission: false,
      maxDelay: DENOKV_MAX_DELAY_MS,
    };
    const open = () => this.#open();
    this.deadLetters = new DenoKvDeadLetters({
      kv: open,
      prefix: o.prefix,
      limit: o.deadLetterLimit,
      logger: o.logger,
      meter: o.meter,
    });
    this.#dispatcher = new KvDispatcher({
      kv: open,
      prefix: o.prefix,
      database: o.database,
      owner: this.#owner,
      clock: o.clock,
      enqueueOptions: o.enqueueOptions,
      foreignMessage: o.foreignMessage,
      logger: o.logger,
    });
  }

  #open(): Promise<Deno.Kv> {
    if (this.#opening) return this.#opening;
    if (this.#o.kv) return this.#opening = Promise.resolve(this.#o.kv);
    const path = this.#o.path;
    const where = path === undefined ? "the default database" : `"${path}"`;
    return this.#opening = Deno.openKv(path).catch((err) => {
      throw new Error(`Cannot open Deno KV at ${where}: ${(err as Error).message}`, {
        cause: err,
      });
    });
  }

  /**
   * Enqueues the envelope for every subscription group of its topic (a competing group gets one
   * copy, each live instance of a broadcast group one). A repeated `dedupeKey` within the window
   * is dropped. Topics with no group get nothing, as on the other transports. With
   * `options.deliverAt` in the future each copy is enqueued with Deno KV's `delay` (at most 30
   * days), carrying its due time so that none is handed over early.
   *
   * @throws {Error} When the transport is closed or Deno KV refuses the write (for example a
   *   message over 64 KiB).
   */
  async publish(envelope: Envelope, options?: TransportPublishOptions): Promise<void> {
    if (this.#closed) {
      throw new Error(`Cannot publish to topic "${envelope.topic}": the transport is closed`);
    }
    const at = options?.deliverAt;
    const delay = at === undefined ? 0 : Math.max(0, at - this.#clock.now());
    if (typeof envelope.dedupeKey !== "string") {
      const size = sizeOf(envelope);
      if (size !== undefined && size <= BATCH_BYTES / 2) {
        return await (delay > 0
          ? this.#coalesce(envelope, at!, size)
          : this.#groupCommit(envelope, size));
      }
    }
    return await this.#publishAlone(envelope, delay, at);
  }

  /** One publish in commits of its own (a dedupe key, a large envelope, many targets). */
  async #publishAlone(envelope: Envelope, delay: number, at?: number): Promise<void> {
    const kv = await this.#open();
    const messages = await this.#fanOut(kv, envelope, delay > 0 ? at : undefined);
    const dedupe = typeof envelope.dedupeKey === "string"
      ? keys.dedupe(this.#prefix, envelope.topic, envelope.dedupeKey)
      : undefined;
    if (messages.length === 0 && !dedupe) return;
    for (let i = 0; i === 0 || i < messages.length; i += CHUNK) {
      const write = () => {
        const op = kv.atomic();
        if (i === 0 && dedupe) {
          op.check({ key: dedupe, versionstamp: null })
            .set(dedupe, true, { expireIn: this.#o.dedupeWindow });
        }
        for (const m of messages.slice(i, i + CHUNK)) {
          op.enqueue(m, this.#o.enqueueOptions(m, delay));
        }
        return op.commit();
      };
      let ok: boolean;
      try {
        ok = (await retryLocked(write)).ok;
      } catch (err) {
        throw new Error(
          `Cannot publish to topic "${envelope.topic}" on Deno KV: ${(err as Error).message}`,
          { cause: err },
        );
      }
      if (!ok) return; // The dedupe key was used within the window.
    }
  }

  async #fanOut(kv: Deno.Kv, envelope: Envelope, due?: number): Promise<DeliverMessage[]> {
    const p = this.#prefix;
    const topic = envelope.topic;
    return (await this.#targets(kv, topic)).map(({ group, instance }) => ({
      mark: MARK,
      kind: "deliver",
      prefix: p,
      qid: newQid(),
      topic,
      group,
      ...(instance !== undefined ? { instance } : {}),
      attempt: 1,
      envelope,
      ...(due !== undefined ? { due } : {}),
    }));
  }

  /** The topic's competing groups and the live instances of its broadcast groups. */
  async #targets(kv: Deno.Kv, topic: string, flags?: { broadcast: boolean }): Promise<Target[]> {
    const p = this.#prefix;
    const now = this.#clock.now();
    const out: Target[] = [];
    for await (const g of kv.list<GroupRecord>({ prefix: keys.groups(p, topic) })) {
      const group = g.key[3] as string;
      if (g.value.distribution !== "broadcast") {
        out.push({ group });
        continue;
      }
      if (flags) flags.broadcast = true;
      for (const { id } of await liveInstances(kv, p, topic, group, now)) {
        out.push({ group, instance: id });
      }
    }
    return out;
  }

  /**
   * The topic's targets with the versionstamp of its group stamp (changed whenever a group of the
   * topic is created or dropped). Kept for {@linkcode GROUP_CACHE_MS} when the topic has no
   * broadcast group (whose targets are the live instances); a commit that checks the stamp fails
   * when the groups changed since, and is planned again from a fresh read.
   */
  async #topicTargets(kv: Deno.Kv, topic: string, fresh: boolean): Promise<TopicTargets> {
    const now = this.#clock.now();
    const cached = this.#groupCache.get(topic);
    if (!fresh && cached && now - cached.at < GROUP_CACHE_MS) return cached;
    const stamp = (await kv.get(keys.groupStamp(this.#prefix, topic))).versionstamp;
    const flags = { broadcast: false };
    const entry: TopicTargets = { stamp, targets: await this.#targets(kv, topic, flags), at: now };
    if (flags.broadcast) this.#groupCache.delete(topic);
    else this.#groupCache.set(topic, entry);
    return entry;
  }
  readonly #groupCache = new Map<string, TopicTargets>();

  /**
   * Publishes that arrive while a commit is in flight are written together by the next one (a
   * group commit: one write for many publishes under load, no wait when idle). Each envelope is
   * still its own queue message per target. Resolves when its commit is stored.
   */
  #groupCommit(envelope: Envelope, size: number): Promise<void> {
    return new Promise<void>((resolve, reject) => {
      this.#queued.push({ envelope, size, resolve, reject });
      if (this.#draining) return;
      this.#draining = true;
      this.#committing = this.#drain();
    });
  }
  #queued: PendingPlain[] = [];
  #draining = false;
  #committing: Promise<void> = Promise.resolve();

  async #drain(): Promise<void> {
    try {
      await this.#drainQueued();
    } finally {
      this.#draining = false;
    }
  }

  async #drainQueued(): Promise<void> {
    while (this.#queued.length > 0) {
      const batch = this.#queued.splice(0, CHUNK);
      try {
        await this.#writePlain(batch);
        for (const e of batch) e.resolve();
      } catch (err) {
        for (const e of batch) {
          e.reject(
            new Error(
              `Cannot publish to topic "${e.envelope.topic}" on Deno KV: ${(err as Error).message}`,
              { cause: err },
            ),
          );
        }
      }
    }
  }

  /** Writes plain publishes in as few commits as the limits allow, each checking group stamps. */
  async #writePlain(batch: PendingPlain[]): Promise<void> {
    const kv = await this.#open();
    const p = this.#prefix;
    let rest = batch;
    for (let attempt = 0; rest.length > 0; attempt++) {
      if (attempt >= 10) throw new Error("the topic's groups kept changing during the publish");
      const topics = new Map<string, TopicTargets>();
      for (const { envelope: { topic } } of rest) {
        if (!topics.has(topic)) topics.set(topic, await this.#topicTargets(kv, topic, attempt > 0));
      }
      let n = 0, count = 0, bytes = 0;
      const messages: DeliverMessage[] = [];
      for (; n < rest.length; n++) {
        const e = rest[n];
        const { targets } = topics.get(e.envelope.topic)!;
        if (targets.length > CHUNK / 2) {
          // Its copies fill commits of their own: written apart, settled on its own.
          await this.#publishAlone(e.envelope, 0).then(e.resolve, e.reject);
          rest = [...rest.slice(0, n), ...rest.slice(n + 1)];
          n--;
          continue;
        }
        if (
          n > 0 &&
          (count + targets.length > CHUNK || bytes + targets.length * e.size > COMMIT_BYTES)
        ) {
          break;
        }
        count += targets.length;
        bytes += targets.length * e.size;
        for (const { group, instance } of targets) {
          messages.push({
            mark: MARK,
            kind: "deliver",
            prefix: p,
            qid: newQid(),
            topic: e.envelope.topic,
            group,
            ...(instance !== undefined ? { instance } : {}),
            attempt: 1,
            envelope: e.envelope,
          });
        }
      }
      const chunk = rest.slice(0, n);
      const checked = [...new Set(chunk.map((e) => e.envelope.topic))];
      const { ok } = await retryLocked(() => {
        const op = kv.atomic();
        for (const topic of checked) {
          op.check({ key: keys.groupStamp(p, topic), versionstamp: topics.get(topic)!.stamp });
        }
        for (const m of messages) op.enqueue(m, this.#o.enqueueOptions(m, 0));
        return op.commit();
      });
      if (!ok) {
        // A group was created or dropped since the look: plan these again from a fresh read.
        for (const topic of checked) this.#groupCache.delete(topic);
        continue;
      }
      rest = rest.slice(n);
      attempt = -1;
    }
  }

  /**
   * Queues a delayed publish with the others of this turn: they are written together, and those
   * for one group due within {@linkcode BATCH_SPAN_MS} of each other share one queue message
   * (a {@linkcode BatchMessage}), so the queue hands out one message where it would hand out
   * many. Resolves when the flush that holds it is stored.
   */
  #coalesce(envelope: Envelope, due: number, size: number): Promise<void> {
    return new Promise<void>((resolve, reject) => {
      const list = this.#pending.get(envelope.topic);
      const entry = { envelope, due, size, resolve, reject };
      if (list) list.push(entry);
      else this.#pending.set(envelope.topic, [entry]);
      this.#flushing ??= new Promise<void>((done) =>
        setTimeout(() => {
          const pending = this.#pending;
          this.#pending = new Map();
          this.#flushing = undefined;
          const write = this.#flush(pending).finally(() => {
            this.#writes.delete(write);
            done();
          });
          this.#writes.add(write);
        }, 0)
      );
    });
  }
  #pending = new Map<string, PendingDelayed[]>();
  #flushing: Promise<void> | undefined;
  readonly #writes = new Set<Promise<void>>();

  async #flush(pending: Map<string, PendingDelayed[]>): Promise<void> {
    for (const [topic, entries] of pending) {
      try {
        await this.#writeDelayed(topic, entries);
        for (const e of entries) e.resolve();
      } catch (err) {
        const error = new Error(
          `Cannot publish to topic "${topic}" on Deno KV: ${(err as Error).message}`,
          { cause: err },
        );
        for (const e of entries) e.reject(error);
      }
    }
  }

  async #writeDelayed(topic: string, entries: PendingDelayed[]): Promise<void> {
    const kv = await this.#open();
    const p = this.#prefix;
    const sorted = [...entries].sort((a, b) => a.due - b.due);
    const messages: Array<{ m: DeliverMessage | BatchMessage; due: number; size: number }> = [];
    for (const { group, instance } of await this.#targets(kv, topic)) {
      const base = {
        mark: MARK as typeof MARK,
        prefix: p,
        topic,
        group,
        ...(instance !== undefined ? { instance } : {}),
        attempt: 1,
      };
      for (let i = 0; i < sorted.length;) {
        let j = i + 1, size = sorted[i].size;
        while (
          j < sorted.length && j - i < BATCH_MAX &&
          sorted[j].due - sorted[i].due <= BATCH_SPAN_MS &&
          size + sorted[j].size <= BATCH_BYTES
        ) size += sorted[j++].size;
        const qid = newQid();
        const m: DeliverMessage | BatchMessage = j - i === 1
          ? { ...base, kind: "deliver", qid, envelope: sorted[i].envelope, due: sorted[i].due }
          : {
            ...base,
            kind: "batch",
            qid,
            parts: sorted.slice(i, j).map(({ envelope, due }) => ({ envelope, due })),
          };
        messages.push({ m, due: sorted[i].due, size });
        i = j;
      }
    }
    for (let i = 0; i < messages.length;) {
      let j = i + 1, size = messages[i].size;
      while (j < messages.length && j - i < CHUNK && size + messages[j].size <= COMMIT_BYTES) {
        size += messages[j++].size;
      }
      const chunk = messages.slice(i, j);
      await retryLocked(() => {
        const op = kv.atomic();
        const now = this.#clock.now();
        for (const { m, due } of chunk) op.enqueue(m, this.#o.enqueueOptions(m, due - now));
        return op.commit();
      });
      i = j;
    }
  }

  /**
   * Joins a group: registers it in KV (durably: a competing group keeps receiving messages while
   * it has no live instance, and they wait for one), registers this instance with a heartbeat,
   * and starts the queue listener.
   *
   * @throws {Error} When the group exists with another distribution (drop it with
   *   {@linkcode DenoKvTransport.dropGroup}) or the transport is closed.
   */
  async subscribe(spec: SubscriptionSpec, listener: DeliveryListener): Promise<Subscription> {
    if (this.#closed) {
      throw new Error(`Cannot subscribe to topic "${spec.topic}": the transport is closed`);
    }
    const kv = await this.#open();
    const gk = keys.group(this.#prefix, spec.topic, spec.group);
    for (;;) {
      const existing = await kv.get<GroupRecord>(gk);
      if (existing.value) {
        if (existing.value.distribution === spec.distribution) break;
        throw new Error(
          `Cannot join group "${spec.group}" of topic "${spec.topic}" as ${spec.distribution}: it is ${existing.value.distribution} in Deno KV (dropGroup() removes it)`,
        );
      }
      const record: GroupRecord = { distribution: spec.distribution };
      const stamp = keys.groupStamp(this.#prefix, spec.topic);
      const write = () => kv.atomic().check(existing).set(gk, record).set(stamp, newQid()).commit();
      if ((await retryLocked(write)).ok) {
        break;
      }
    }
    const instance: LocalInstance = { spec, listener, closed: false };
    this.#dispatcher.add(instance);
    await beat(kv, this.#prefix, this.#owner, [spec], this.#clock.now() + this.#o.ttl, this.#o.ttl);
    this.#dispatcher.listen(kv);
    this.#startTimers(kv);
    if (spec.distribution === "competing") {
      await unpark(kv, this.#prefix, spec.topic, spec.group, this.#o.enqueueOptions);
    }
    await sweepUndelivered(kv, this.#prefix, this.#o.enqueueOptions, this.#o.logger);
    return { close: () => this.#leave(kv, instance) };
  }

  async #leave(kv: Deno.Kv, instance: LocalInstance): Promise<void> {
    if (instance.closed) return;
    this.#dispatcher.remove(instance);
    if (this.#closed) return;
    const s = instance.spec;
    const key = keys.instance(this.#prefix, s.topic, s.group, s.instanceId);
    await retryLocked(() => kv.delete(key)).catch((err) =>
      this.#o.logger?.warn("deno kv: could not unregister an instance", { error: err })
    );
  }

  /** Heartbeat and repairs every third of the instance TTL; inbox (and wake) every poll. */
  #startTimers(kv: Deno.Kv): void {
    if (this.#timersStarted) return;
    this.#timersStarted = true;
    const p = this.#prefix;
    this.#every(Math.max(1, Math.floor(this.#o.ttl / 3)), async () => {
      const specs = this.#dispatcher.specs();
      const now = this.#clock.now();
      await beat(kv, p, this.#owner, specs, now + this.#o.ttl, this.#o.ttl);
      for (const s of specs) {
        if (s.distribution === "competing") {
          await unpark(kv, p, s.topic, s.group, this.#o.enqueueOptions);
        }
      }
      await sweepUndelivered(kv, p, this.#o.enqueueOptions, this.#o.logger);
      await recoverInboxes(kv, p, now, this.#o.enqueueOptions);
    });
    const { file, path } = this.#o;
    this.#every(this.#o.pollEvery, async () => {
      if (file) await this.#dispatcher.wake(kv);
      await this.#dispatcher.pollInbox(kv);
    });
    if (file && path !== undefined) {
      // Deno KV's SQLite backend gives a message that a dead process held back to the queue
      // when a handle opens the database after the message is 5 s overdue, else only at its
      // once-a-minute clean-up. Opening one more handle a little later makes a consumer that
      // restarted right after a crash pick up the messages the crash left behind within seconds.
      this.#every(RECOVERY_PROBE_MS, async () => {
        (await Deno.openKv(path)).close();
      }, false);
    }
  }

  #every(ms: number, fn: () => Promise<void>, repeat = true): void {
    let handle: TimerHandle;
    const tick = () => {
      this.#timers.delete(handle);
      fn().catch((err) => {
        if (!this.#closed) this.#o.logger?.warn("deno kv: background task failed", { error: err });
      }).finally(() => {
        if (this.#closed || !repeat) return;
        handle = this.#clock.setTimeout(tick, ms);
        this.#timers.add(handle);
      });
    };
    handle = this.#clock.setTimeout(tick, ms);
    this.#timers.add(handle);
  }

  /** Publishes to `<topic>.dlq` when it has a group, else keeps the dead letter in KV. */
  async deadLetter(envelope: Envelope): Promise<void> {
    const kv = await this.#open();
    for await (const _ of kv.list({ prefix: keys.groups(this.#prefix, envelope.topic) })) {
      await this.publish(envelope);
      return;
    }
    await this.deadLetters.add(envelope, this.#clock.now());
  }

  /**
   * Forgets a subscription group: its registry entry, instances and parked messages. Publishes
   * stop reaching it; queue messages already on their way are dropped when they arrive.
   *
   * @param topic Topic name.
   * @param group Group name.
   */
  async dropGroup(topic: string, group: string): Promise<void> {
    const kv = await this.#open();
    const p = this.#prefix;
    await retryLocked(() =>
      kv.atomic().delete(keys.group(p, topic, group)).set(keys.groupStamp(p, topic), newQid())
        .commit()
    );
    for (const prefix of [keys.instances(p, topic, group), keys.parkedOf(p, topic, group)]) {
      for await (const e of kv.list({ prefix })) await retryLocked(() => kv.delete(e.key));
    }
  }

  /** What the transport's keys tell about each group (the Deno KV queue cannot be listed). */
  async inspect(): Promise<QueueStats[]> {
    return inspectDenoKv(await this.#open(), this.#prefix, this.#clock.now());
  }

  /**
   * Stops heartbeats, unregisters this process's instances and, when the transport opened the
   * database, closes it. Deliveries still unfinished are handed back to Deno KV, which redelivers
   * them; queued retries and parked messages stay in the database.
   */
  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    // Publishes accepted so far are stored before the handle closes.
    await this.#flushing;
    await Promise.all(this.#writes);
    await this.#committing;
    for (const t of this.#timers) this.#clock.clearTimeout(t);
    this.#timers.clear();
    const specs = this.#dispatcher.specs();
    const kv = this.#opening ? await this.#opening.catch(() => undefined) : undefined;
    await this.#dispatcher.close(kv);
    if (!kv) return;
    const p = this.#prefix;
    try {
      for (const s of specs) {
        const key = keys.instance(p, s.topic, s.group, s.instanceId);
        await retryLocked(() => kv.delete(key));
      }
      await retryLocked(() => kv.delete(keys.owner(p, this.#owner)));
      // What other processes handed to this one goes back on the queue for someone else.
      await recoverInboxes(kv, p, this.#clock.now(), this.#o.enqueueOptions, this.#owner);
    } catch (err) {
      this.#o.logger?.warn("deno kv: could not unregister on close", { error: err });
    }
    if (!this.#o.kv) {
      kv.close();
      await this.#dispatcher.listening;
    }
  }

  /** Schedule state in Deno KV: a key per schedule, `[prefix, "schedules", name]`. */
  scheduleStore(): ScheduleStore {
    return this.#schedules ??= new DenoKvScheduleStore(() => this.#open(), this.#prefix);
  }
  #schedules: ScheduleStore | undefined;
}

/**
 * A transport on a Deno KV queue: persistent across restarts with a `path`, shared by every
 * process that opens the same database, and on Deno Deploy's managed KV when no path is given.
 * Needs `--unstable-kv` (or `"unstable": ["kv"]` in deno.json).
 *
 * @param options `path` or `kv`, `keyPrefix`, timings and services.
 * @returns The transport (the database opens on first use).
 * @throws {TypeError} For conflicting or invalid options.
 * @throws {Error} When Deno KV is not enabled.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { EventBus, getPublisher, handler, Int, topic } from "@fw/events";
 * import { denoKvTransport } from "@fw/events/denokv";
 *
 * const Job = topic("jobs.created", { n: Int });
 * const bus = new EventBus({ transports: { kv: denoKvTransport({ path: ":memory:" }) } });
 * const got: number[] = [];
 * await bus.add(handler(Job).options({ group: "workers" }).handle((m) => void got.push(m.payload.n)));
 * await bus.start();
 * await getPublisher(Job, { bus })({ n: 7 });
 * while (got.length === 0) await new Promise((r) => setTimeout(r, 5));
 * await bus.stop();
 * assert.deepEqual(got, [7]);
 * ```
 */
export function denoKvTransport(options: DenoKvTransportOptions = {}): DenoKvTransport {
  return new DenoKvTransport(options);
}
