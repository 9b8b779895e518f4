/**
 * The realtime broker interface: live fan-out of topic messages to SSE and WebSocket clients.
 *
 * A realtime broker is not a handler transport: it has no retries, manual ack, dead letters or
 * competing consumers. Every subscriber of a topic gets every message published while it is
 * subscribed. Brokers that retain a window (`kvStream`) can also replay what a subscriber missed,
 * starting after a last-seen id; live-only brokers (`kvPubSub`, `sqlRealtime`, the in-memory one)
 * cannot, and say so in {@linkcode RealtimeCapabilities}.
 *
 * Every realtime broker passes the suite in `realtime/conformance.ts` (`@fw/events/testing`).
 *
 * @module
 */

import type { Topic } from "../topic.ts";

/** One message as a realtime subscriber sees it. */
export interface RealtimeMessage<P = unknown> {
  /**
   * Stream id, unique per topic and increasing in publish order; usable as an SSE event id and as
   * `from` to resume after it.
   */
  readonly id: string;
  /** Topic name. */
  readonly topic: string;
  /** The payload (validated against the topic schema when published through a `Topic`). */
  readonly payload: P;
}

/** What a realtime broker can do. */
export interface RealtimeCapabilities {
  /** Keeps a window of recent messages and replays it to a subscriber that gives `from`. */
  readonly replay: boolean;
}

/** Options of {@linkcode RealtimeBroker.subscribe}. */
export interface RealtimeSubscribeOptions {
  /**
   * Where to start: `"latest"` (default) for messages published from now on, or the `id` of the
   * last message the subscriber saw, to replay everything after it that the broker still retains.
   * Live-only brokers accept only `"latest"` (an id gives `recovered: false`). A broker that
   * retains a window rejects an id it can tell it never issued (malformed, or newer than the last
   * id it gave out) with {@linkcode RealtimeCursorError}.
   */
  readonly from?: string;
  /**
   * Called when the broker knows the subscriber missed messages it can no longer deliver: the
   * resume id fell out of the retained window, or a reconnect to the store lost messages. The
   * subscription carries on with what comes next.
   */
  readonly onGap?: (gap: RealtimeGap) => void;
}

/** Messages a subscriber missed, as far as the broker can tell. */
export interface RealtimeGap {
  /** Topic name. */
  readonly topic: string;
  /** The last id the subscriber had (the `from` it asked for, or the last one delivered). */
  readonly after: string;
  /** Why: the id is older than the retained window, or the connection to the store was lost. */
  readonly reason: "trimmed" | "disconnected";
}

/** A live subscription. */
export interface RealtimeSubscription {
  /**
   * With `from` an id: `true` when every retained message after it was replayed (nothing was
   * missed), `false` when the id fell out of the window or the broker cannot replay. With
   * `"latest"`: always `true`.
   */
  readonly recovered: boolean;
  /** Stops delivery; resolves once no further callback will run. */
  close(): Promise<void>;
}

/** The topic argument of a realtime broker: a declared topic or its name. */
export type RealtimeTopic = Topic | string;

/** A realtime fan-out broker. */
export interface RealtimeBroker {
  /** Name for logs and discovery (`memory`, `kvstream`, `kvpubsub`, `sql`). */
  readonly name: string;
  /** What it can do. */
  readonly capabilities: RealtimeCapabilities;
  /**
   * Publishes one payload to every subscriber of the topic. Given a `Topic`, the payload is
   * validated first and an invalid one throws a `ValidationException`.
   *
   * @returns The message as subscribers receive it (with its id).
   */
  publish(topic: RealtimeTopic, payload: unknown): Promise<RealtimeMessage>;
  /**
   * Subscribes to a topic. The callback runs once per message, in publish order; a callback that
   * throws is logged and does not stop the subscription.
   *
   * @throws {RealtimeCursorError} (replay brokers) when `from` is an id the broker never issued.
   */
  subscribe(
    topic: RealtimeTopic,
    callback: (message: RealtimeMessage) => void | Promise<void>,
    options?: RealtimeSubscribeOptions,
  ): Promise<RealtimeSubscription>;
  /** Closes every subscription and releases the broker's connections. */
  close(): Promise<void>;
}

/**
 * Thrown (as a rejection of {@linkcode RealtimeBroker.subscribe}) when `from` is an id the broker
 * can tell it never issued: malformed, or newer than the newest id of the topic. An id that was
 * issued but has left the retained window is not an error: it gives `recovered: false` and an
 * `onGap` call instead.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { RealtimeCursorError } from "@fw/events";
 * const error = new RealtimeCursorError("orders.created", "nope");
 * assert.equal(error.message, 'Unknown realtime id "nope" for topic "orders.created"');
 * assert.equal(error.id, "nope");
 * ```
 */
export class RealtimeCursorError extends Error {
  /** The topic name. */
  readonly topic: string;
  /** The id that was asked for. */
  readonly id: string;

  /**
   * Creates the error.
   *
   * @param topic The topic name.
   * @param id The `from` id that was never issued.
   * @param detail Why, appended after a colon (for example `"malformed"`).
   */
  constructor(topic: string, id: string, detail?: string) {
    super(
      `Unknown realtime id "${id}" for topic "${topic}"${detail ? `: ${detail}` : ""}`,
    );
    this.name = "RealtimeCursorError";
    this.topic = topic;
    this.id = id;
  }
}
