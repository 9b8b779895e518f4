/**
 * One subscription of a Redis realtime broker: delivers messages to its callback one at a time,
 * in order (waiting for a callback's promise before the next message), logs a callback that
 * throws and carries on, and, for `kvStream`, holds live messages back while it replays.
 *
 * @module
 */

import type { Logger } from "@fw/runtime";
import type { RealtimeGap, RealtimeMessage, RealtimeSubscription } from "./realtime.ts";
import { compareStreamIds, type StreamId } from "./_kv_common.ts";
import { OrderedDelivery, type RealtimeCallback } from "./_fanout.ts";

export type { RealtimeCallback };

/** A message with its parsed stream id (for ordering checks). */
export interface OrderedMessage {
  readonly message: RealtimeMessage;
  readonly order: StreamId;
}

/** A subscription of a Redis realtime broker. */
export class KvSubscription implements RealtimeSubscription {
  /** Set by the broker before `subscribe()` resolves. */
  recovered = true;
  /** The last id handed to the callback, or what the subscriber asked to start after. */
  lastId: string;
  readonly #delivery: OrderedDelivery;
  #closed = false;
  /** Live messages held back while replaying (`undefined` once live). */
  #held: OrderedMessage[] | undefined;
  /** Messages at or before this id are not delivered again. */
  #position: StreamId | undefined;

  /**
   * @param topic Topic name.
   * @param callback The subscriber's callback.
   * @param onGap The subscriber's gap listener.
   * @param logger Where failing callbacks are logged.
   * @param detach Removes the subscription from its broker.
   * @param from The `from` the subscriber gave (the first `lastId`).
   * @param holding Hold live messages until {@linkcode KvSubscription.goLive}.
   */
  constructor(
    readonly topic: string,
    readonly callback: RealtimeCallback,
    readonly onGap: ((gap: RealtimeGap) => void) | undefined,
    readonly logger: Logger | undefined,
    readonly detach: (s: KvSubscription) => void | Promise<void>,
    from: string,
    holding: boolean,
  ) {
    this.lastId = from;
    this.#held = holding ? [] : undefined;
    this.#delivery = new OrderedDelivery(callback, logger);
  }

  /** True once closed. */
  get closed(): boolean {
    return this.#closed;
  }

  /** A live message from the stream reader: held while replaying, skipped if already delivered. */
  offer(message: RealtimeMessage, order: StreamId): void {
    if (this.#closed) return;
    if (this.#held) {
      this.#held.push({ message, order });
      return;
    }
    if (this.#position && compareStreamIds(order, this.#position) <= 0) return;
    this.#position = order;
    this.deliver(message);
  }

  /** A replayed message (in order, before going live). */
  replay(message: RealtimeMessage, order: StreamId): void {
    this.#position = order;
    this.deliver(message);
  }

  /** Ends the replay: from now on only messages after `position` are delivered. */
  goLive(position: StreamId): void {
    const held = this.#held ?? [];
    this.#held = undefined;
    if (!this.#position || compareStreamIds(position, this.#position) > 0) {
      this.#position = position;
    }
    for (const { message, order } of held) this.offer(message, order);
  }

  /** Tells the subscriber it missed messages (a throwing listener is logged). */
  gap(reason: RealtimeGap["reason"]): void {
    if (this.#closed || !this.onGap) return;
    try {
      this.onGap({ topic: this.topic, after: this.lastId, reason });
    } catch (error) {
      this.logger?.error("realtime gap listener failed", { topic: this.topic, error });
    }
  }

  /** Hands a message to the callback, after the ones before it. */
  deliver(message: RealtimeMessage): void {
    if (this.#closed) return;
    this.lastId = message.id;
    this.#delivery.deliver(message);
  }

  /** Stops delivery; resolves once the running callback (if any) has finished. */
  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    this.#delivery.stop();
    this.#held = undefined;
    await this.detach(this);
    await this.#delivery.running;
  }
}
