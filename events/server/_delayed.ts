/**
 * Internal to the Event Server: publish requests with a future `deliverAt`. The server checks the
 * due time, hands the message to its application's handlers through the event bus with that
 * `deliverAt` (so the handlers' transport holds it, durably where it is persistent), and holds the
 * realtime side in its own process until then ({@linkcode DelayQueue}): WebSocket and SSE
 * subscribers see the message, with its stream id, when it is due. A server that stops with
 * delayed messages not yet due logs how many its realtime subscribers will not see.
 *
 * @module
 */

import type { Logger } from "@fw/runtime";
import type { Clock } from "@fw/runtime";
import type { RealtimeBroker } from "../realtime/realtime.ts";
import { DelayQueue } from "../schedule/_delay_queue.ts";

/** How far ahead a publish request's `deliverAt` may be: 30 days. */
export const EVENT_SERVER_MAX_DELAY_MS = 30 * 24 * 3600_000;

interface Held {
  readonly topic: string;
  readonly payload: unknown;
  readonly id: string;
}

/** The realtime side of delayed publishes of one server. */
export class DelayedRealtime {
  readonly #queue: DelayQueue<Held>;
  readonly #logger: Logger;

  /**
   * @param realtime The realtime broker due messages go to.
   * @param clock The server's clock.
   * @param logger Logs realtime publishes that fail when due.
   */
  constructor(realtime: RealtimeBroker, clock: Clock, logger: Logger) {
    this.#logger = logger;
    this.#queue = new DelayQueue(clock, (held) => {
      realtime.publish(held.topic, held.payload).catch((error) =>
        logger.error("eventServer(): a delayed message could not reach its subscribers", {
          topic: held.topic,
          messageId: held.id,
          error: error as Error,
        })
      );
    });
  }

  /** Holds a message for the realtime subscribers until `at`. */
  hold(at: number, topic: string, payload: unknown, id: string): void {
    this.#queue.add(at, { topic, payload, id });
  }

  /** Drops what is held (the server is stopping). */
  close(): void {
    if (this.#queue.size > 0) {
      this.#logger.warn("eventServer(): stopped with delayed messages not yet due", {
        messages: this.#queue.size,
      });
    }
    this.#queue.close();
  }
}
