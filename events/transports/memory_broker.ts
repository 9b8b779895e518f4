/**
 * The in-process broker: the default transport, and the one behind the local development broker.
 * Subscriptions are groups; a competing group hands each message to one instance in round-robin
 * order, a broadcast group to every instance. Retries run on the broker's clock. Messages
 * published while a competing group has no instance wait in the group until one joins.
 *
 * @module
 */

import {
  type Clock,
  type Logger,
  type Meter,
  systemClock,
  type TimerHandle,
  type Validator,
} from "@fw/runtime";
import type { Envelope } from "../envelope.ts";
import { MemoryDeadLetters } from "../dead_letters.ts";
import { MemoryScheduleStore } from "../schedule/store.ts";
import { DelayQueue } from "../schedule/_delay_queue.ts";
import {
  type DeliveryHooks,
  type Group,
  type Instance,
  MemoryDelivery,
} from "./_memory_delivery.ts";
import {
  type Admission,
  type DeliveryListener,
  QueueFullError,
  type QueueStats,
  type Subscription,
  type SubscriptionSpec,
  type Transport,
  type TransportCapabilities,
  type TransportPublishOptions,
} from "../transport.ts";
import { inspectMemory } from "./_memory_inspect.ts";

/** Options of {@linkcode MemoryBroker}. */
export interface MemoryBrokerOptions {
  /** Clock for retry timers (default the system clock). */
  clock?: Clock;
  /** Randomness for `simulateDuplicates` (default `Math.random`). */
  random?: () => number;
  /** Redeliver about 2% of handled messages, to exercise idempotent handlers. */
  simulateDuplicates?: boolean;
  /** Dead letters kept with no `<topic>.dlq` subscriber (default 1000). */
  deadLetterLimit?: number;
  /** How long a `dedupeKey` suppresses repeats, in ms (default 600000). */
  dedupeWindowMs?: number;
  /** Logger for evictions and dropped broadcasts. */
  logger?: Logger;
  /** Meter for `events.dlq.evicted`. */
  meter?: Meter;
}

const DUPLICATE_RATE = 0.02;
const DEDUPE_LIMIT = 10_000;

/** How far ahead the memory broker holds a delayed message: 365 days. */
export const MEMORY_MAX_DELAY_MS = 365 * 24 * 3600 * 1000;

/** Pause before a due message whose every receiving queue was full is offered again. */
const REFUSED_DUE_WAIT_MS = 50;

/**
 * The in-memory transport with round-robin competing groups, broadcast groups, retries on its
 * clock and a bounded dead-letter buffer.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { MemoryBroker } from "@fw/events";
 * const broker = new MemoryBroker();
 * const got: unknown[] = [];
 * await broker.subscribe(
 *   { topic: "a.b", group: "g", distribution: "competing", instanceId: "1" },
 *   (d) => {
 *     got.push(d.envelope.payload);
 *     void d.ack();
 *     return "accepted";
 *   },
 * );
 * await broker.publish({ id: "1", topic: "a.b", payload: 7, attributes: {}, traceId: "t", publishedAt: 0 });
 * assert.deepEqual(got, [7]);
 * await broker.close();
 * ```
 */
export class MemoryBroker implements Transport {
  /** `memory`. */
  readonly name: string = "memory";
  /**
   * In-process, ordered, not persistent; publish learns about full queues. Delayed messages wait
   * in the process (a restart loses them), at most {@linkcode MEMORY_MAX_DELAY_MS} ahead.
   */
  readonly capabilities: TransportCapabilities = {
    ordering: true,
    persistent: false,
    external: false,
    admission: true,
    maxDelay: MEMORY_MAX_DELAY_MS,
  };
  /** Dead letters with no `<topic>.dlq` subscriber. */
  readonly deadLetters: MemoryDeadLetters;
  readonly #clock: Clock;
  readonly #random: () => number;
  readonly #duplicates: boolean;
  readonly #dedupeWindow: number;
  readonly #logger?: Logger;
  readonly #topics = new Map<string, Map<string, Group>>();
  /** The groups of each topic in creation order, for publish (no iterator per message). */
  readonly #groupLists = new Map<string, Group[]>();
  readonly #timers = new Set<TimerHandle>();
  readonly #dedupe = new Map<string, number>();
  #closed = false;
  #duplicated = 0;
  /** Delayed publishes, released to the topic's groups when due. */
  readonly #delayed: DelayQueue<Envelope>;

  /**
   * Creates a broker.
   *
   * @param options Clock, randomness, duplicates, limits.
   */
  constructor(options: MemoryBrokerOptions = {}) {
    this.#clock = options.clock ?? systemClock;
    this.#random = options.random ?? Math.random;
    this.#duplicates = options.simulateDuplicates ?? false;
    this.#dedupeWindow = options.dedupeWindowMs ?? 600_000;
    this.#logger = options.logger;
    this.#delayed = new DelayQueue(this.#clock, (envelope) => this.#due(envelope));
    this.deadLetters = new MemoryDeadLetters({
      limit: options.deadLetterLimit,
      logger: options.logger,
      meter: options.meter,
    });
  }

  /** How many duplicates `simulateDuplicates` has injected. */
  get duplicatesSimulated(): number {
    return this.#duplicated;
  }

  /** Scheduled retries not yet due. */
  get pendingRetries(): number {
    return this.#timers.size;
  }

  /** Delayed publishes not yet due. */
  get pendingDelayed(): number {
    return this.#delayed.size;
  }

  /**
   * Delivers to every group of the topic; with `options.deliverAt` in the future, keeps the
   * message in the process until then (the `dedupeKey` is checked now).
   *
   * @throws {QueueFullError} When a group's instances all refused (queue full, overflow `throw`).
   */
  publish(envelope: Envelope, options?: TransportPublishOptions): Promise<void> {
    try {
      const at = options?.deliverAt;
      if (at !== undefined && at > this.#clock.now()) this.#delay(envelope, at);
      else this.publishNow(envelope);
    } catch (err) {
      return Promise.reject(err);
    }
    return Promise.resolve();
  }

  /**
   * {@linkcode MemoryBroker.publish} without the promise: delivers to every group of the topic
   * before it returns (the event bus calls it on its hot path).
   *
   * @param envelope The envelope.
   * @param validatedBy The validator that produced the payload, when the bus's publisher built
   *   the envelope (its consumers with that validator copy the payload instead of checking it).
   * @throws {QueueFullError} When a group's instances all refused (queue full, overflow `throw`).
   * @throws {Error} When the broker is closed.
   */
  publishNow(envelope: Envelope, validatedBy?: Validator<unknown>): void {
    if (this.#closed) {
      throw new Error(`Cannot publish to topic "${envelope.topic}": the broker is closed`);
    }
    if (envelope.dedupeKey !== undefined && this.#seen(envelope)) return;
    const groups = this.#groupLists.get(envelope.topic);
    if (groups === undefined) return;
    let refused: string[] | undefined;
    for (let i = 0; i < groups.length; i++) {
      const group = groups[i];
      if (this.#toGroup(group, envelope, 1, false, validatedBy) === "rejected") {
        (refused ??= []).push(group.name);
      }
    }
    if (refused) throw new QueueFullError(envelope.topic, refused);
  }

  #delay(envelope: Envelope, at: number): void {
    if (this.#closed) {
      throw new Error(`Cannot publish to topic "${envelope.topic}": the broker is closed`);
    }
    if (envelope.dedupeKey !== undefined && this.#seen(envelope)) return;
    this.#delayed.add(at, envelope);
  }

  /** A delayed message is due: offered to the groups the topic has now; full ones try again. */
  #due(envelope: Envelope, only?: readonly Group[]): void {
    const groups = only ?? this.#groupLists.get(envelope.topic);
    if (groups === undefined) return;
    let refused: Group[] | undefined;
    for (const group of groups) {
      if (this.#toGroup(group, envelope, 1, false) === "rejected") (refused ??= []).push(group);
    }
    if (refused) this.#later(REFUSED_DUE_WAIT_MS, () => this.#due(envelope, refused));
  }

  #seen(envelope: Envelope): boolean {
    const key = `${envelope.topic}\u0000${envelope.dedupeKey}`;
    const now = this.#clock.now();
    const at = this.#dedupe.get(key);
    if (at !== undefined && now - at < this.#dedupeWindow) return true;
    this.#dedupe.delete(key);
    this.#dedupe.set(key, now);
    if (this.#dedupe.size > DEDUPE_LIMIT) {
      this.#dedupe.delete(this.#dedupe.keys().next().value!);
    }
    return false;
  }

  #toGroup(
    group: Group,
    envelope: Envelope,
    attempt: number,
    duplicate = false,
    validatedBy?: Validator<unknown>,
  ): Admission {
    if (group.distribution === "broadcast") {
      let result: Admission = "accepted";
      for (const instance of group.instances) {
        if (
          this.#offer(group, instance, envelope, attempt, duplicate, validatedBy) === "rejected"
        ) {
          result = "rejected";
        }
      }
      return result;
    }
    const n = group.instances.length;
    if (n === 0) {
      group.pending.push([envelope, attempt]);
      return "accepted";
    }
    for (let tried = 0; tried < n; tried++) {
      // round robin by comparison, not modulo (two integer divisions per message); `next` is
      // past the end only after an instance left
      const at = group.next < n ? group.next : group.next % n;
      const instance = group.instances[at];
      group.next = at + 1 < n ? at + 1 : 0;
      const admission = this.#offer(group, instance, envelope, attempt, duplicate, validatedBy);
      if (admission !== "rejected") return admission;
    }
    return "rejected";
  }

  #offer(
    group: Group,
    instance: Instance,
    envelope: Envelope,
    attempt: number,
    duplicate = false,
    validatedBy?: Validator<unknown>,
  ): Admission {
    return instance.listener(
      new MemoryDelivery(this.#hooks, group, instance, envelope, attempt, duplicate, validatedBy),
    );
  }

  /** What a delivery calls back into (one object per broker, no closures per message). */
  readonly #hooks: DeliveryHooks = {
    acked: (d) => {
      if (this.#duplicates && !d.duplicate && this.#random() < DUPLICATE_RATE) {
        // Redeliver once more, as a fresh delivery; a duplicate is never duplicated again.
        this.#duplicated++;
        this.#later(0, () => this.#redeliver(d.group, d.instance, d.envelope, 1, true));
      }
    },
    retried: (d, delayMs) => {
      this.#later(
        delayMs,
        () => this.#redeliver(d.group, d.instance, d.envelope, d.attempt + 1, false),
      );
    },
  };

  #later(ms: number, fn: () => void): void {
    if (this.#closed) return;
    const handle = this.#clock.setTimeout(() => {
      this.#timers.delete(handle);
      fn();
    }, ms);
    this.#timers.add(handle);
  }

  #redeliver(
    group: Group,
    instance: Instance,
    envelope: Envelope,
    attempt: number,
    duplicate: boolean,
  ): void {
    if (group.distribution === "competing") {
      this.#toGroup(group, envelope, attempt, duplicate);
    } else if (!instance.closed) {
      this.#offer(group, instance, envelope, attempt, duplicate);
    } else {
      this.#logger?.warn("broadcast redelivery skipped: the instance left", {
        traceId: envelope.traceId,
        topic: envelope.topic,
        messageId: envelope.id,
      });
    }
  }

  /**
   * Joins a group.
   *
   * @throws {Error} When the group exists with another distribution.
   */
  subscribe(spec: SubscriptionSpec, listener: DeliveryListener): Promise<Subscription> {
    let groups = this.#topics.get(spec.topic);
    if (!groups) this.#topics.set(spec.topic, groups = new Map());
    let group = groups.get(spec.group);
    if (!group) {
      group = {
        name: spec.group,
        distribution: spec.distribution,
        instances: [],
        next: 0,
        pending: [],
      };
      groups.set(spec.group, group);
      const list = this.#groupLists.get(spec.topic);
      if (list) list.push(group);
      else this.#groupLists.set(spec.topic, [group]);
    } else if (group.distribution !== spec.distribution) {
      return Promise.reject(
        new Error(
          `Cannot join group "${spec.group}" of topic "${spec.topic}" as ${spec.distribution}: it is ${group.distribution}`,
        ),
      );
    }
    const instance: Instance = { id: spec.instanceId, listener, closed: false };
    group.instances.push(instance);
    const g = group;
    if (g.pending.length > 0) {
      const waiting = g.pending;
      g.pending = [];
      for (const [env, attempt] of waiting) this.#toGroup(g, env, attempt);
    }
    return Promise.resolve({
      close: () => {
        instance.closed = true;
        g.instances = g.instances.filter((i) => i !== instance);
        return Promise.resolve();
      },
    });
  }

  /** Publishes to `<topic>.dlq` when it has a group, else keeps the dead letter. */
  async deadLetter(envelope: Envelope): Promise<void> {
    const groups = this.#topics.get(envelope.topic);
    if (groups && groups.size > 0) {
      try {
        await this.publish(envelope);
        return;
      } catch (err) {
        if (!(err instanceof QueueFullError)) throw err;
      }
    }
    this.deadLetters.add(envelope, this.#clock.now());
  }

  /** Each group's backlog: only a competing group with no instance yet holds messages. */
  inspect(): Promise<QueueStats[]> {
    return Promise.resolve(inspectMemory(this.#topics, this.#timers.size, this.#clock.now()));
  }

  /** Cancels scheduled retries and refuses further publishes. */
  close(): Promise<void> {
    this.#closed = true;
    if (this.#delayed.size > 0) {
      this.#logger?.warn("memory broker closed with delayed messages not yet due", {
        messages: this.#delayed.size,
      });
    }
    this.#delayed.close();
    for (const t of this.#timers) this.#clock.clearTimeout(t);
    if (this.#timers.size > 0) {
      this.#logger?.warn("memory broker closed with scheduled retries", {
        retries: this.#timers.size,
      });
    }
    this.#timers.clear();
    return Promise.resolve();
  }

  /** Schedule state in this process, shared by every bus on this broker. */
  scheduleStore(): MemoryScheduleStore {
    return this.#schedules ??= new MemoryScheduleStore();
  }
  #schedules: MemoryScheduleStore | undefined;
}
