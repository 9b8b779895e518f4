/**
 * What every realtime broker (memory, kvStream, kvPubSub, sql) shares on publish and subscribe:
 * the topic name of a topic argument, the payload check against a `Topic`, and (memory, kvStream,
 * kvPubSub) the in-order delivery to one subscriber's callback.
 *
 * @module
 */

import { type Logger, ValidationException } from "@fw/runtime";
import { isTopic } from "../topic.ts";
import type { RealtimeMessage, RealtimeTopic } from "./realtime.ts";

/** The name of a topic argument. */
export function topicName(topic: RealtimeTopic): string {
  const name = typeof topic === "string" ? topic : topic?.name;
  if (typeof name !== "string" || !name) {
    throw new TypeError(`Invalid topic "${String(name)}": expected a topic or a topic name`);
  }
  return name;
}

/**
 * The arguments every broker's `subscribe()` checks first.
 *
 * @param topic The topic argument.
 * @param callback The callback argument.
 * @returns The topic's name.
 * @throws {TypeError} For a missing topic name or a callback that is not a function.
 */
export function checkSubscription(topic: RealtimeTopic, callback: unknown): string {
  const name = topicName(topic);
  if (typeof callback !== "function") {
    throw new TypeError(`Invalid callback for topic "${name}": expected a function`);
  }
  return name;
}

/** Validates `payload` against `topic` when it is a `Topic`; throws a `ValidationException`. */
export function checkPayload(topic: RealtimeTopic, payload: unknown): void {
  if (!isTopic(topic)) return;
  const checked = topic.validate(payload);
  if (!checked.ok) throw new ValidationException(checked.errors);
}

/** A realtime callback. */
export type RealtimeCallback = (message: RealtimeMessage) => void | Promise<void>;

/**
 * Hands messages to one callback in order: a synchronous callback is called at once, an async one
 * is awaited before the next message; a callback that throws or rejects is logged and delivery
 * carries on.
 */
export class OrderedDelivery {
  #queue: RealtimeMessage[] = [];
  #running: Promise<void> | undefined;
  #stopped = false;

  /**
   * @param callback The subscriber's callback.
   * @param logger Where failing callbacks are logged.
   */
  constructor(readonly callback: RealtimeCallback, readonly logger: Logger | undefined) {}

  /** Calls the callback with `message` now, or after the messages before it. */
  deliver(message: RealtimeMessage): void {
    if (this.#stopped) return;
    if (this.#running) {
      this.#queue.push(message);
      return;
    }
    const pending = this.#call(message);
    if (pending) this.#running = this.#drain(pending);
  }

  /** Drops the queued messages; nothing more is delivered. */
  stop(): void {
    this.#stopped = true;
    this.#queue = [];
  }

  /** The running async callback and the queue behind it (`undefined` when idle). */
  get running(): Promise<void> | undefined {
    return this.#running;
  }

  #call(message: RealtimeMessage): Promise<void> | undefined {
    try {
      const result = this.callback(message);
      if (result instanceof Promise) return result.catch((error) => this.#failed(message, error));
    } catch (error) {
      this.#failed(message, error);
    }
    return undefined;
  }

  async #drain(first: Promise<void>): Promise<void> {
    await first;
    while (this.#queue.length && !this.#stopped) await this.#call(this.#queue.shift()!);
    this.#running = undefined;
  }

  #failed(message: RealtimeMessage, error: unknown): void {
    this.logger?.error("realtime subscriber failed", {
      topic: message.topic,
      id: message.id,
      error,
    });
  }
}
