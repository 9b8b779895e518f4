/**
 * The `fw.events.v1` wire types: WebSocket frames, HTTP bodies, error codes and close codes. The
 * full text is `PROTOCOL.md` beside this file; the JSON Schemas in `schemas/` are the normative
 * shapes and these types mirror them.
 *
 * @module
 */

/** The protocol id, sent in `hello`/`welcome` and the discovery document. */
export const EVENTS_PROTOCOL = "fw.events.v1";

/** Path of the discovery document on a server's origin. */
export const DISCOVERY_PATH = "/.well-known/fw/events";

/** `hello`: the first client frame; names the protocol and may carry a bearer token. */
export interface HelloFrame {
  /** Frame type. */
  readonly type: "hello";
  /** Must be {@linkcode EVENTS_PROTOCOL}. */
  readonly protocol: string;
  /** The full `Authorization` value (`Bearer <jwt>`) or the bare token. */
  readonly token?: string;
}

/** `welcome`: the answer to `hello`. */
export interface WelcomeFrame {
  /** Frame type. */
  readonly type: "welcome";
  /** The protocol id. */
  readonly protocol: typeof EVENTS_PROTOCOL;
  /** Server-chosen connection id (for logs). */
  readonly connection: string;
  /** True when a verified identity is attached to the connection. */
  readonly authenticated: boolean;
  /** How often the server pings; 0 when it does not. */
  readonly pingIntervalMs: number;
}

/** `subscribe`: starts subscription `sub` to `topic`, after stream id `from` when given. */
export interface SubscribeFrame {
  /** Frame type. */
  readonly type: "subscribe";
  /** Client-chosen subscription id, unique on the connection (`[A-Za-z0-9._:-]{1,64}`). */
  readonly sub: string;
  /** Topic name. */
  readonly topic: string;
  /** The last stream id the client saw: replay what came after it. */
  readonly from?: string;
}

/** `subscribed`: the subscription is live; replayed events follow it. */
export interface SubscribedFrame {
  /** Frame type. */
  readonly type: "subscribed";
  /** Subscription id. */
  readonly sub: string;
  /** Topic name. */
  readonly topic: string;
  /** True when every message after `from` was replayed (always true without `from`). */
  readonly recovered: boolean;
}

/** `unsubscribe`: ends subscription `sub`. */
export interface UnsubscribeFrame {
  /** Frame type. */
  readonly type: "unsubscribe";
  /** Subscription id. */
  readonly sub: string;
}

/** `unsubscribed`: no further event of `sub` follows. */
export interface UnsubscribedFrame {
  /** Frame type. */
  readonly type: "unsubscribed";
  /** Subscription id. */
  readonly sub: string;
}

/** `event`: one message of a subscribed topic. */
export interface EventFrame<P = unknown> {
  /** Frame type. */
  readonly type: "event";
  /** Subscription id. */
  readonly sub: string;
  /** Topic name. */
  readonly topic: string;
  /** The topic's logical channel, when it declares one. */
  readonly channel?: string;
  /** Stream id: resume after it with `subscribe.from` or SSE `Last-Event-ID`. */
  readonly id: string;
  /** The payload, valid against the topic's schema. */
  readonly payload: P;
}

/** `gap`: the subscription missed messages that can no longer be delivered. */
export interface GapFrame {
  /** Frame type. */
  readonly type: "gap";
  /** Subscription id. */
  readonly sub: string;
  /** Topic name. */
  readonly topic: string;
  /** The last stream id the subscription had. */
  readonly after: string;
  /** Left the retained window, or the server lost its connection to the broker. */
  readonly reason: "trimmed" | "disconnected";
}

/** `ping` (either direction). */
export interface PingFrame {
  /** Frame type. */
  readonly type: "ping";
  /** Echoed in the `pong`. */
  readonly id?: string;
}

/** `pong` (either direction). */
export interface PongFrame {
  /** Frame type. */
  readonly type: "pong";
  /** The `ping`'s id. */
  readonly id?: string;
}

/** Stable codes of the WebSocket `error` frame. */
export type WsErrorCode =
  | "invalid_json"
  | "invalid_frame"
  | "unknown_type"
  | "binary_not_supported"
  | "frame_too_large"
  | "hello_required"
  | "unsupported_protocol"
  | "unauthorized"
  | "forbidden"
  | "unknown_topic"
  | "duplicate_subscription"
  | "unknown_subscription"
  | "too_many_subscriptions"
  | "unknown_cursor"
  | "slow_consumer"
  | "internal";

/** `error`: a frame was refused; the connection stays open unless a close follows. */
export interface ErrorFrame {
  /** Frame type. */
  readonly type: "error";
  /** Stable code. */
  readonly code: WsErrorCode;
  /** Human-readable detail. */
  readonly message: string;
  /** The subscription concerned, when there is one. */
  readonly sub?: string;
  /** The type of the refused frame, when known. */
  readonly frame?: string;
}

/** Frames a client sends. */
export type ClientFrame = HelloFrame | SubscribeFrame | UnsubscribeFrame | PingFrame | PongFrame;

/** Frames a server sends. */
export type ServerFrame =
  | WelcomeFrame
  | SubscribedFrame
  | UnsubscribedFrame
  | EventFrame
  | GapFrame
  | PingFrame
  | PongFrame
  | ErrorFrame;

/** Every frame of the WebSocket profile, either direction (wire field for the channel: `channel`). */
export type EventServerFrame = ClientFrame | ServerFrame;

/** The `type` of every frame a client may send. */
export const CLIENT_FRAME_TYPES: ReadonlySet<string> = new Set<ClientFrame["type"]>([
  "hello",
  "subscribe",
  "unsubscribe",
  "ping",
  "pong",
]);

/** The `type` of every frame a server may send. */
export const SERVER_FRAME_TYPES: ReadonlySet<string> = new Set<ServerFrame["type"]>([
  "welcome",
  "subscribed",
  "unsubscribed",
  "event",
  "gap",
  "ping",
  "pong",
  "error",
]);

/** WebSocket close codes of the protocol. */
export const EVENTS_CLOSE_CODES = {
  /** The client or server ended the connection normally. */
  normal: 1000,
  /** The server is shutting down: reconnect (elsewhere) and resume. */
  goingAway: 1001,
  /** `hello` named a protocol the server does not speak. */
  unsupportedProtocol: 4000,
  /** The `hello` token was refused: get a new token before reconnecting. */
  unauthorized: 4001,
  /** Nothing was received for two ping intervals. */
  pingTimeout: 4002,
  /** Slow consumer: the client did not read fast enough and its send queue overflowed. */
  slowConsumer: 4008,
} as const;

/** What a publisher should do about a publish answer. */
export type PublishOutcome = "accepted" | "permanent" | "retryable" | "ambiguous";

/** Stable codes of the HTTP error body. */
export type HttpErrorCode =
  | "invalid_request"
  | "invalid_payload"
  | "unsupported_media_type"
  | "too_large"
  | "not_acceptable"
  | "unauthorized"
  | "forbidden"
  | "unknown_topic"
  | "conflict"
  | "in_progress"
  | "unknown_cursor"
  | "unavailable"
  | "internal";

/** Body of `POST /events/publish`. */
export interface PublishRequest {
  /** Publisher-chosen message id; the idempotency key of retries. */
  readonly id: string;
  /** Topic name. */
  readonly topic: string;
  /** The payload, valid against the topic's schema. */
  readonly payload: unknown;
  /** String attributes (keys starting with `auth.` are dropped and set by the server). */
  readonly attributes?: Readonly<Record<string, string>>;
  /** Ordering key. */
  readonly key?: string;
  /** Topic contract version; must equal the topic's version when it declares one. */
  readonly version?: string;
  /**
   * Deliver no earlier than this time (ms since the epoch); a time already past means now. Only
   * for servers whose discovery document sets `features.delayedPublish`.
   */
  readonly deliverAt?: number;
}

/** Body of a 200 answer to a publish. */
export interface PublishResponse {
  /** Always `accepted`. */
  readonly outcome: "accepted";
  /** The message id. */
  readonly id: string;
  /** The topic name. */
  readonly topic: string;
  /**
   * The stream id subscribers see; absent for a message accepted with a future `deliverAt`,
   * which gets its stream id when it is due.
   */
  readonly streamId?: string;
  /** The trace id the message carries (from `traceparent` when given). */
  readonly traceId: string;
  /** True when this repeats the answer to an earlier identical publish. */
  readonly duplicate: boolean;
  /** The due time of a message accepted with a future `deliverAt` (instead of `streamId`). */
  readonly deliverAt?: number;
}

/** Body of every non-2xx answer of the server's HTTP endpoints. */
export interface HttpErrorBody {
  /** What a publisher should do. */
  readonly outcome: Exclude<PublishOutcome, "accepted">;
  /** Stable code. */
  readonly code: HttpErrorCode;
  /** Human-readable detail. */
  readonly message: string;
  /** The message id, when the request named one. */
  readonly id?: string;
  /** Field errors (invalid request or payload). */
  readonly errors?: readonly { readonly field: string; readonly message: string }[];
  /** Suggested wait before a retry. */
  readonly retryAfterMs?: number;
}

/** The answer of a publish: accepted, or an error with its outcome. */
export type PublishResult = PublishResponse | HttpErrorBody;

/** One topic in the discovery document. */
export interface DiscoveryTopic {
  /** Topic name. */
  readonly name: string;
  /** Logical channel. */
  readonly channel?: string;
  /** Contract version. */
  readonly version?: string;
  /** JSON Schema of the payload. */
  readonly schema?: Readonly<Record<string, unknown>>;
}

/** The discovery document at {@linkcode DISCOVERY_PATH}. */
export interface DiscoveryDocument {
  /** The protocol id. */
  readonly protocol: typeof EVENTS_PROTOCOL;
  /** Endpoint profiles served. */
  readonly profiles: readonly ("http" | "websocket" | "sse" | "grpc")[];
  /** Absolute paths on the document's origin; `sse` contains `{topic}`. */
  readonly endpoints: {
    readonly publish?: string;
    readonly websocket?: string;
    readonly sse?: string;
  };
  /** Feature flags. */
  readonly features: {
    readonly multiplex: boolean;
    readonly resume: boolean;
    readonly idempotentPublish: boolean;
    readonly traceContext: boolean;
    readonly bearerAuth: boolean;
    readonly helloToken: boolean;
    /** Publish requests may carry `deliverAt` (absent: `false`). */
    readonly delayedPublish?: boolean;
  };
  /** Limits a client must respect. */
  readonly limits: {
    readonly maxFrameBytes: number;
    readonly maxPublishBytes: number;
    readonly maxSubscriptions: number;
    readonly maxBufferedBytes: number;
    readonly pingIntervalMs: number;
    readonly idempotencyWindowMs: number;
  };
  /** Declared topics (may be empty when the server does not list them). */
  readonly topics: readonly DiscoveryTopic[];
}

/**
 * The HTTP status and outcome of every HTTP error code: a client may rely on either.
 *
 * | code | status | outcome |
 * | --- | --- | --- |
 * | `invalid_request`, `invalid_payload`, `unknown_cursor` | 400 | permanent |
 * | `unauthorized` | 401 | permanent |
 * | `forbidden` | 403 | permanent |
 * | `unknown_topic` | 404 | permanent |
 * | `not_acceptable` | 406 | permanent |
 * | `conflict` | 409 | permanent |
 * | `in_progress` | 409 | retryable |
 * | `too_large` | 413 | permanent |
 * | `unsupported_media_type` | 415 | permanent |
 * | `internal` | 500 | ambiguous |
 * | `unavailable` | 503 | retryable |
 */
export const HTTP_ERRORS: Readonly<
  Record<HttpErrorCode, { readonly status: number; readonly outcome: HttpErrorBody["outcome"] }>
> = Object.freeze({
  invalid_request: { status: 400, outcome: "permanent" },
  invalid_payload: { status: 400, outcome: "permanent" },
  unknown_cursor: { status: 400, outcome: "permanent" },
  unauthorized: { status: 401, outcome: "permanent" },
  forbidden: { status: 403, outcome: "permanent" },
  unknown_topic: { status: 404, outcome: "permanent" },
  not_acceptable: { status: 406, outcome: "permanent" },
  conflict: { status: 409, outcome: "permanent" },
  in_progress: { status: 409, outcome: "retryable" },
  too_large: { status: 413, outcome: "permanent" },
  unsupported_media_type: { status: 415, outcome: "permanent" },
  internal: { status: 500, outcome: "ambiguous" },
  unavailable: { status: 503, outcome: "retryable" },
});
