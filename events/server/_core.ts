/**
 * The state one Event Server shares between its endpoints: declared topics, the realtime broker,
 * the access rule, limits, the open connections and the one heartbeat timer that pings them all.
 * Internal.
 *
 * @module
 */

import type { AuthUser, Clock, Logger, TimerHandle } from "@fw/runtime";
import type { RealtimeBroker } from "../realtime/realtime.ts";
import { DelayedRealtime } from "./_delayed.ts";
import type { Topic } from "../topic.ts";
import type { EventBus } from "../event_bus.ts";
import type { DiscoveryDocument } from "../protocol/frames.ts";

/** What a client asks to do with a topic. */
export type TopicAction = "subscribe" | "publish";

/** Decides whether a user (or an anonymous client: `undefined`) may subscribe to or publish on a topic. */
export type AccessRule = (
  user: AuthUser | undefined,
  topic: string,
  action: TopicAction,
) => boolean | Promise<boolean>;

/** The limits of one server (all resolved): those it publishes in discovery, and its own. */
export type ServerLimits = DiscoveryDocument["limits"] & {
  readonly maxIdempotencyKeys: number;
};

/** An open WebSocket connection or SSE stream. */
export interface LiveClient {
  /** Called every ping interval. */
  beat(now: number): void;
  /** Ends the connection because the server is stopping; settles once it is released. */
  shutdown(): Promise<void>;
  /** The topics it subscribes to now (one entry per subscription). */
  topics(): Iterable<string>;
}

/** The access decision. */
export type Access = "ok" | "unauthorized" | "forbidden";

/** Shared state of one Event Server. */
export class ServerCore {
  readonly live = new Set<LiveClient>();
  stopping = false;
  /** Connections closed for being too slow, since start. */
  slowConsumerCloses = 0;
  #timer: TimerHandle | undefined;
  #connections = 0;
  #delayed: DelayedRealtime | undefined;

  constructor(
    readonly topics: ReadonlyMap<string, Topic>,
    readonly realtime: RealtimeBroker,
    readonly access: AccessRule,
    readonly limits: ServerLimits,
    readonly clock: Clock,
    readonly logger: Logger,
    readonly verifyToken: ((token: string) => Promise<AuthUser>) | undefined,
    /** The bus of the server's own application when forwarding to its handlers is on. */
    readonly handlersBus: () => EventBus | undefined,
  ) {}

  /** Delayed publishes held for the realtime subscribers (`_delayed.ts`). */
  get delayed(): DelayedRealtime {
    return this.#delayed ??= new DelayedRealtime(this.realtime, this.clock, this.logger);
  }

  /** A new connection id. */
  connectionId(): string {
    return `c${(++this.#connections).toString(36)}-${crypto.randomUUID().slice(0, 8)}`;
  }

  /**
   * Applies the access rule. A rule that throws denies (and is logged).
   *
   * @returns `ok`, or why not: `unauthorized` (no identity) or `forbidden` (this identity).
   */
  async authorize(user: AuthUser | undefined, topic: string, action: TopicAction): Promise<Access> {
    let allowed = false;
    try {
      allowed = (await this.access(user, topic, action)) === true;
    } catch (error) {
      this.logger.error("eventServer(): the access rule threw; access denied", {
        topic,
        action,
        error: error as Error,
      });
    }
    if (allowed) return "ok";
    return user === undefined ? "unauthorized" : "forbidden";
  }

  /** Starts the heartbeat timer. */
  start(): void {
    this.stopping = false;
    this.#schedule();
  }

  #schedule(): void {
    if (this.limits.pingIntervalMs <= 0 || this.stopping) return;
    this.#timer = this.clock.setTimeout(this.#beat, this.limits.pingIntervalMs);
  }

  #beat = (): void => {
    this.#timer = undefined;
    const now = this.clock.now();
    for (const client of this.live) {
      try {
        client.beat(now);
      } catch (error) {
        this.logger.error("eventServer(): heartbeat failed", { error: error as Error });
      }
    }
    this.#schedule();
  };

  /** Stops the timer and ends every connection. */
  async stop(): Promise<void> {
    this.stopping = true;
    if (this.#timer !== undefined) this.clock.clearTimeout(this.#timer);
    this.#timer = undefined;
    this.#delayed?.close();
    this.#delayed = undefined;
    await Promise.allSettled([...this.live].map((c) => c.shutdown()));
    this.live.clear();
  }
}

/**
 * The bearer token of an `Authorization` value or a bare token.
 *
 * @param value `Bearer <token>` or `<token>`.
 * @returns The token.
 */
export function bearerToken(value: string): string {
  const m = /^bearer\s+(.+)$/i.exec(value.trim());
  return (m ? m[1] : value).trim();
}
