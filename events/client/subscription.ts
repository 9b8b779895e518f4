/**
 * One subscription of the browser client: its topic, state, last stream id and `recovered` flag,
 * and the callbacks it reports to. The client owns the socket; a subscription only records what
 * happened to it.
 *
 * @module
 */

import type { EventClientError } from "./errors.ts";

/**
 * What the client needs of a topic: its name and, optionally, a payload validator. Topics made
 * with `topic()` from `@fw/events` fit; so does `{ name: "orders.created" }`, validated against
 * the JSON Schema the server lists in its discovery document.
 */
export interface ClientTopic<P = unknown> {
  /** Topic name. */
  readonly name: string;
  /** Payload validator (`topic().validate`). */
  readonly validate?: (
    input: unknown,
  ) =>
    | { ok: true; value: P }
    | { ok: false; errors: readonly { field: string; message: string }[] };
}

/** Where an event came from. */
export interface EventMeta {
  /** Stream id: what the subscription resumes after. */
  readonly id: string;
  /** Topic name. */
  readonly topic: string;
  /** The topic's channel, when it declares one. */
  readonly channel?: string;
}

/** The state of a subscription. */
export type SubscriptionState = "connecting" | "live" | "reconnecting" | "closed";

/** Callbacks of one subscription. */
export interface SubscribeOptions {
  /** Resume after this stream id on the first connection too. */
  from?: string;
  /**
   * Called on every `subscribed` answer: `recovered` is false when the server could not replay
   * everything after the last id (some messages were missed).
   */
  onSubscribed?: (info: { readonly recovered: boolean; readonly resumed: boolean }) => void;
  /** Called when the server reports messages it can no longer deliver (`after` = last id had). */
  onGap?: (info: { readonly after: string; readonly reason: string }) => void;
  /** Called for errors about this subscription (refusals, auth, invalid payloads). */
  onError?: (error: EventClientError) => void;
}

/** A live subscription returned by `client.subscribe()`. */
export interface EventSubscription {
  /** Subscription id on the socket. */
  readonly sub: string;
  /** Topic name. */
  readonly topic: string;
  /** Current state. */
  readonly state: SubscriptionState;
  /** The last stream id received (resumes from it after a reconnect). */
  readonly lastId: string | undefined;
  /** The `recovered` flag of the last `subscribed` answer (undefined before the first). */
  readonly recovered: boolean | undefined;
  /** The last error reported for this subscription. */
  readonly lastError: EventClientError | undefined;
  /** Stops the subscription; no callback runs after it. */
  unsubscribe(): void;
}

/** Internal record of a subscription. */
export class SubscriptionRecord<P = unknown> implements EventSubscription {
  state: SubscriptionState = "connecting";
  lastId: string | undefined;
  recovered: boolean | undefined;
  lastError: EventClientError | undefined;

  constructor(
    readonly sub: string,
    readonly topicRef: ClientTopic<P>,
    readonly callback: (payload: P, meta: EventMeta) => void,
    readonly options: SubscribeOptions,
    readonly onUnsubscribe: (record: SubscriptionRecord<P>) => void,
  ) {
    this.lastId = options.from;
  }

  get topic(): string {
    return this.topicRef.name;
  }

  unsubscribe(): void {
    if (this.state === "closed") return;
    this.state = "closed";
    this.onUnsubscribe(this);
  }
}
