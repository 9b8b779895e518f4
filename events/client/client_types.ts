/**
 * The public types of `eventClient()`: its options, the client interface and connection states.
 *
 * @module
 */

import type { DiscoveryDocument } from "../protocol/frames.ts";
import type { EventClientError } from "./errors.ts";
import type {
  ClientTopic,
  EventMeta,
  EventSubscription,
  SubscribeOptions,
} from "./subscription.ts";

/** Reconnect back-off bounds. */
export interface ReconnectOptions {
  /** First back-off ceiling in ms (default 500). */
  initialDelayMs?: number;
  /** Largest back-off ceiling in ms (default 30,000). */
  maxDelayMs?: number;
}

/** The connection state of a client. */
export type ClientState = "idle" | "connecting" | "open" | "waiting" | "closed";

/** Options of {@linkcode eventClient}. */
export interface EventClientOptions {
  /** The Event Server's WebSocket URL (`wss://events.example/events/ws`). */
  url: string;
  /**
   * Returns the full `Authorization` value (`Bearer <jwt>`); called before every connection, so
   * a refreshed token is used after a reconnect. Omit it for anonymous clients.
   */
  token?: () => Promise<string | undefined> | string | undefined;
  /**
   * Reconnect after a lost connection (default true). Delays use full jitter: a random wait
   * between 0 and `min(maxDelayMs, initialDelayMs * 2^attempt)`, the attempt counter reset once a
   * connection is welcomed.
   */
  reconnect?: boolean | ReconnectOptions;
  /** Read the discovery document before the first connection and refuse other servers (default true). */
  discovery?: boolean;
  /** Errors not tied to one subscription (lost connection, unknown frames, refused server). */
  onError?: (error: EventClientError) => void;
  /** Called when the connection state changes. */
  onStateChange?: (state: ClientState) => void;
  /** Called when a reconnect is scheduled. */
  onRetry?: (info: { readonly attempt: number; readonly delayMs: number }) => void;
  /** Random source in [0, 1) for the jitter (default `Math.random`). */
  random?: () => number;
  /** WebSocket constructor (default the global one; React Native and Deno have it). */
  WebSocket?: typeof WebSocket;
  /** fetch for the discovery document (default the global one). */
  fetch?: typeof fetch;
}

/** The client returned by {@linkcode eventClient}. */
export interface EventClient {
  /**
   * Subscribes to a topic. Payloads are checked against the topic's validator (or, for a topic
   * given by name, the JSON Schema of the discovery document); invalid ones go to `onError`.
   *
   * @param topic A `topic()` or `{ name }` or a topic name.
   * @param callback Receives each valid payload and its stream id.
   * @param options `from`, `onSubscribed` (with `recovered`), `onGap`, `onError`.
   * @returns The subscription.
   */
  subscribe<P = unknown>(
    topic: ClientTopic<P> | string,
    callback: (payload: P, meta: EventMeta) => void,
    options?: SubscribeOptions,
  ): EventSubscription;
  /** Current connection state. */
  readonly state: ClientState;
  /** How many connections the server welcomed so far (one per successful (re)connect). */
  readonly connections: number;
  /** The server's discovery document, once read. */
  readonly discovery: DiscoveryDocument | undefined;
  /** Closes the socket and every subscription. */
  close(): void;
}
