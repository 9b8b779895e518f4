/**
 * The in-memory realtime broker: fan-out inside one process, with a bounded retained window per
 * topic so a subscriber that reconnects can resume after its last id.
 *
 * Ids are `<epoch>-<seq>`: the broker's start time in ms and a per-topic sequence from 1. An id
 * of another epoch was issued by an earlier broker (a restarted process): its messages are gone,
 * so it resumes with `recovered: false` and an `onGap` call, like an id that left the window. An
 * id of this epoch that is newer than the topic's last id, or that is not of this shape, was never
 * issued and is refused with a {@linkcode RealtimeCursorError}.
 *
 * @module
 */

import { type Clock, type Logger, systemClock } from "@fw/runtime";
import {
  checkPayload,
  checkSubscription,
  OrderedDelivery,
  type RealtimeCallback,
  topicName,
} from "./_fanout.ts";
import {
  type RealtimeBroker,
  type RealtimeCapabilities,
  RealtimeCursorError,
  type RealtimeMessage,
  type RealtimeSubscribeOptions,
  type RealtimeSubscription,
  type RealtimeTopic,
} from "./realtime.ts";

/** Options of {@linkcode memoryRealtime}. */
export interface MemoryRealtimeOptions {
  /**
   * Messages retained per topic for resuming (default 1000). `0` makes the broker live-only
   * (`capabilities.replay` false).
   */
  maxLen?: number;
  /** Retained messages older than this many ms are dropped from the window (default: no limit). */
  replayTtlMs?: number;
  /** Clock for the epoch and the time-to-live (default the system clock). */
  clock?: Clock;
  /** Logger for callbacks that throw. */
  logger?: Logger;
}

interface Retained {
  readonly message: RealtimeMessage;
  readonly at: number;
}

interface TopicState {
  last: number;
  readonly retained: Retained[];
  readonly subscribers: Set<Subscriber>;
}

/** One subscriber: delivers in order, waiting for a callback's promise before the next message. */
class Subscriber implements RealtimeSubscription {
  readonly #delivery: OrderedDelivery;
  #closed = false;

  constructor(
    readonly recovered: boolean,
    callback: RealtimeCallback,
    logger: Logger | undefined,
    readonly detach: (s: Subscriber) => void,
  ) {
    this.#delivery = new OrderedDelivery(callback, logger);
  }

  deliver(message: RealtimeMessage): void {
    if (this.#closed) return;
    this.#delivery.deliver(message);
  }

  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    this.#delivery.stop();
    this.detach(this);
    await this.#delivery.running;
  }
}

/**
 * The in-memory realtime broker class; create one with {@linkcode memoryRealtime}.
 */
export class MemoryRealtime implements RealtimeBroker {
  /** Always `"memory"`. */
  readonly name = "memory";
  /** `replay` is true unless `maxLen` is 0. */
  readonly capabilities: RealtimeCapabilities;
  readonly #maxLen: number;
  readonly #ttl: number;
  readonly #clock: Clock;
  readonly #logger: Logger | undefined;
  readonly #epoch: string;
  readonly #topics = new Map<string, TopicState>();
  #closed = false;

  /**
   * Creates a broker.
   *
   * @param options Window size, time-to-live, clock and logger.
   * @throws {RangeError} For a negative or non-integer `maxLen`, or a `replayTtlMs` that is not a
   * positive number.
   */
  constructor(options: MemoryRealtimeOptions = {}) {
    const maxLen = options.maxLen ?? 1000;
    if (!Number.isInteger(maxLen) || maxLen < 0) {
      throw new RangeError(`Invalid option "maxLen": expected an integer >= 0, got "${maxLen}"`);
    }
    const ttl = options.replayTtlMs ?? Infinity;
    if (typeof ttl !== "number" || !(ttl > 0)) {
      throw new RangeError(`Invalid option "replayTtlMs": expected a number > 0, got "${ttl}"`);
    }
    this.#maxLen = maxLen;
    this.#ttl = ttl;
    this.#clock = options.clock ?? systemClock;
    this.#logger = options.logger;
    this.#epoch = String(Math.floor(this.#clock.now()));
    this.capabilities = Object.freeze({ replay: maxLen > 0 });
  }

  /** Validates (given a `Topic`), assigns the next id and hands the message to every subscriber. */
  // deno-lint-ignore require-await
  async publish(topic: RealtimeTopic, payload: unknown): Promise<RealtimeMessage> {
    if (this.#closed) throw new Error("Realtime broker is closed");
    const name = topicName(topic);
    checkPayload(topic, payload);
    const state = this.#state(name);
    const message: RealtimeMessage = Object.freeze({
      id: `${this.#epoch}-${++state.last}`,
      topic: name,
      payload,
    });
    if (this.#maxLen > 0) {
      state.retained.push({ message, at: this.#clock.now() });
      if (state.retained.length > this.#maxLen) state.retained.shift();
    }
    for (const subscriber of state.subscribers) subscriber.deliver(message);
    return message;
  }

  /** Subscribes; with `from` an id, replays the retained messages after it first. */
  // deno-lint-ignore require-await
  async subscribe(
    topic: RealtimeTopic,
    callback: (message: RealtimeMessage) => void | Promise<void>,
    options: RealtimeSubscribeOptions = {},
  ): Promise<RealtimeSubscription> {
    if (this.#closed) throw new Error("Realtime broker is closed");
    const name = checkSubscription(topic, callback);
    const from = options.from ?? "latest";
    const state = this.#state(name);
    let replay: RealtimeMessage[] = [];
    let recovered = true;
    if (from !== "latest") {
      const seq = this.#seqOf(name, from, state);
      this.#expire(state);
      const first = state.last - state.retained.length + 1;
      if (seq === undefined || seq < first - 1) {
        recovered = false;
        options.onGap?.({ topic: name, after: from, reason: "trimmed" });
      } else {
        replay = state.retained.slice(state.retained.length - (state.last - seq))
          .map((r) => r.message);
      }
    }
    const subscriber = new Subscriber(
      recovered,
      callback,
      this.#logger,
      (s) => state.subscribers.delete(s),
    );
    for (const message of replay) subscriber.deliver(message);
    state.subscribers.add(subscriber);
    return subscriber;
  }

  /** Closes every subscription; later publishes and subscribes reject. */
  async close(): Promise<void> {
    this.#closed = true;
    const all = [...this.#topics.values()].flatMap((s) => [...s.subscribers]);
    await Promise.all(all.map((s) => s.close()));
  }

  /** The sequence number of `id`, `undefined` for another epoch; throws when never issued. */
  #seqOf(topic: string, id: string, state: TopicState): number | undefined {
    if (!this.capabilities.replay) return undefined;
    const dash = id.indexOf("-");
    const epoch = id.slice(0, dash), seq = Number(id.slice(dash + 1));
    if (dash < 1 || !/^\d+$/.test(epoch) || !Number.isSafeInteger(seq) || seq < 1) {
      throw new RealtimeCursorError(topic, id, "malformed");
    }
    if (epoch !== this.#epoch) {
      if (Number(epoch) > Number(this.#epoch)) {
        throw new RealtimeCursorError(topic, id, "newer than this broker");
      }
      return undefined;
    }
    if (seq > state.last) throw new RealtimeCursorError(topic, id, "newer than the last id");
    return seq;
  }

  #expire(state: TopicState): void {
    if (this.#ttl === Infinity) return;
    const oldest = this.#clock.now() - this.#ttl;
    while (state.retained.length && state.retained[0].at < oldest) state.retained.shift();
  }

  #state(name: string): TopicState {
    let state = this.#topics.get(name);
    if (!state) {
      this.#topics.set(name, state = { last: 0, retained: [], subscribers: new Set() });
    }
    return state;
  }
}

/**
 * Creates an in-memory realtime broker (one process; for tests, development and single-instance
 * servers).
 *
 * @param options `maxLen` (retained messages per topic, default 1000, 0 for live-only),
 * `replayTtlMs`, `clock`, `logger`.
 * @returns The broker.
 * @throws {RangeError} For an invalid `maxLen` or `replayTtlMs`.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { Int, memoryRealtime, topic } from "@fw/events";
 * const Ticks = topic("ticks", { n: Int });
 * const broker = memoryRealtime({ maxLen: 100 });
 * const first = await broker.publish(Ticks, { n: 1 });
 * await broker.publish(Ticks, { n: 2 });
 * const seen: number[] = [];
 * const sub = await broker.subscribe(Ticks, (m) => {
 *   seen.push((m.payload as { n: number }).n);
 * }, { from: first.id });
 * assert.equal(sub.recovered, true);
 * assert.deepEqual(seen, [2]);
 * await broker.close();
 * ```
 */
export function memoryRealtime(options: MemoryRealtimeOptions = {}): MemoryRealtime {
  return new MemoryRealtime(options);
}
