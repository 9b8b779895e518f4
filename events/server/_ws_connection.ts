/**
 * One WebSocket connection of the Event Server: `hello`, any number of subscriptions multiplexed
 * by their `sub` id (each resumable with `from`), pings, error frames for bad input, and the
 * bounded send queue that disconnects a slow consumer. Frames of one connection are handled in
 * order. Internal.
 *
 * @module
 */

import type { AuthUser } from "@fw/runtime";
import { parseClientFrame } from "../protocol/schemas.ts";
import {
  type ClientFrame,
  EVENTS_CLOSE_CODES,
  EVENTS_PROTOCOL,
  type SubscribeFrame,
  type WsErrorCode,
} from "../protocol/frames.ts";
import {
  RealtimeCursorError,
  type RealtimeGap,
  type RealtimeMessage,
  type RealtimeSubscription,
} from "../realtime/realtime.ts";
import type { Topic } from "../topic.ts";
import { bearerToken, type LiveClient, type ServerCore } from "./_core.ts";
import { eventTail } from "./_frames.ts";

interface SubState {
  readonly topic: Topic;
  /** `{"type":"event","sub":"<sub>",` */
  readonly prefix: string;
  subscription: RealtimeSubscription | undefined;
  /** Events that arrived before the `subscribed` frame went out. */
  pending: string[] | undefined;
  closed: boolean;
}

const RESOLVED = Promise.resolve();
const encoder = new TextEncoder();

function utf8Bytes(text: string, limit: number): number {
  return text.length * 3 <= limit ? text.length : encoder.encode(text).length;
}

/** Longest wait for a client to answer the close frame of a server that is stopping. */
const CLOSE_WAIT_MS = 2_000;

/** A WebSocket client of the Event Server. */
export class WsConnection implements LiveClient {
  readonly id: string;
  readonly #core: ServerCore;
  readonly #socket: WebSocket;
  readonly #subs = new Map<string, SubState>();
  #done: Promise<void> | undefined;
  #resolveDone: (() => void) | undefined;
  #user: AuthUser | undefined;
  #hello = false;
  #chain: Promise<void> = RESOLVED;
  #lastSeen: number;
  #closed = false;
  #released: Promise<void> = RESOLVED;

  /**
   * Takes over a socket from `Deno.upgradeWebSocket`.
   *
   * @param core The server's shared state.
   * @param socket The socket.
   * @param user The identity verified on the upgrade request, if any.
   */
  constructor(core: ServerCore, socket: WebSocket, user: AuthUser | undefined) {
    this.#core = core;
    this.#socket = socket;
    this.#user = user;
    this.id = core.connectionId();
    this.#lastSeen = core.clock.now();
    // The connection itself is the listener: no closures per connection.
    socket.addEventListener("message", this);
    socket.addEventListener("close", this);
    core.live.add(this);
  }

  /** Socket events (the connection is its own `EventListener` object). */
  handleEvent(event: Event): void {
    if (event.type === "message") this.#receive((event as MessageEvent).data);
    else if (event.type === "close") this.#ended();
  }

  /** The topics of its subscriptions. */
  *topics(): Iterable<string> {
    for (const sub of this.#subs.values()) yield sub.topic.name;
  }

  /** Sends one frame's text; closes a slow consumer whose queue would overflow. */
  #send(text: string): void {
    if (this.#closed) return;
    const socket = this.#socket;
    const buffered = socket.bufferedAmount;
    if (buffered > 0 && buffered + text.length > this.#core.limits.maxBufferedBytes) {
      this.#core.slowConsumerCloses++;
      this.#close(EVENTS_CLOSE_CODES.slowConsumer, "slow consumer: send queue full");
      return;
    }
    try {
      socket.send(text);
    } catch {
      // Closing: the close event ends the connection.
    }
  }

  #error(code: WsErrorCode, message: string, sub?: string, frame?: string): void {
    this.#send(JSON.stringify({
      type: "error",
      code,
      message,
      ...(sub !== undefined ? { sub } : {}),
      ...(frame !== undefined ? { frame } : {}),
    }));
  }

  #receive(data: unknown): void {
    if (this.#closed) return;
    this.#lastSeen = this.#core.clock.now();
    if (typeof data !== "string") {
      return this.#error("binary_not_supported", "Binary frames are not supported: send JSON text");
    }
    const max = this.#core.limits.maxFrameBytes;
    if (utf8Bytes(data, max) > max) {
      return this.#error("frame_too_large", `Frame is larger than ${max} bytes`);
    }
    const parsed = parseClientFrame(data);
    if (!parsed.ok) return this.#error(parsed.code, parsed.message, parsed.sub, parsed.type);
    const frame = parsed.frame;
    if (frame.type === "ping") {
      return this.#send(
        JSON.stringify(frame.id ? { type: "pong", id: frame.id } : { type: "pong" }),
      );
    }
    if (frame.type === "pong") return;
    this.#chain = this.#chain.then(() => this.#handle(frame)).catch((error) => {
      this.#core.logger.error("eventServer(): a WebSocket frame failed", { error: error as Error });
      this.#error("internal", "The server failed to handle the frame", undefined, frame.type);
    });
  }

  async #handle(frame: ClientFrame): Promise<void> {
    if (this.#closed) return;
    if (frame.type === "hello") return await this.#helloFrame(frame.protocol, frame.token);
    if (!this.#hello) {
      return this.#error(
        "hello_required",
        `Send a "hello" frame before "${frame.type}"`,
        "sub" in frame ? frame.sub : undefined,
        frame.type,
      );
    }
    if (frame.type === "subscribe") return await this.#subscribe(frame);
    if (frame.type === "unsubscribe") return await this.#unsubscribe(frame.sub);
  }

  async #helloFrame(protocol: string, token: string | undefined): Promise<void> {
    if (protocol !== EVENTS_PROTOCOL) {
      this.#error(
        "unsupported_protocol",
        `Unsupported protocol "${protocol}": this server speaks "${EVENTS_PROTOCOL}"`,
        undefined,
        "hello",
      );
      return this.#close(EVENTS_CLOSE_CODES.unsupportedProtocol, "unsupported protocol");
    }
    if (token !== undefined) {
      const verify = this.#core.verifyToken;
      try {
        if (!verify) throw new Error("no verifier");
        this.#user = await verify(bearerToken(token));
      } catch {
        this.#error(
          "unauthorized",
          verify
            ? "The token in hello was not accepted"
            : "This server does not accept tokens in hello: send Authorization on the upgrade request",
          undefined,
          "hello",
        );
        return this.#close(EVENTS_CLOSE_CODES.unauthorized, "token not accepted");
      }
    }
    this.#hello = true;
    this.#send(JSON.stringify({
      type: "welcome",
      protocol: EVENTS_PROTOCOL,
      connection: this.id,
      authenticated: this.#user !== undefined,
      pingIntervalMs: this.#core.limits.pingIntervalMs,
    }));
  }

  async #subscribe(frame: SubscribeFrame): Promise<void> {
    const { sub } = frame;
    const core = this.#core;
    if (this.#subs.has(sub)) {
      return this.#error(
        "duplicate_subscription",
        `Subscription "${sub}" already exists`,
        sub,
        "subscribe",
      );
    }
    if (this.#subs.size >= core.limits.maxSubscriptions) {
      return this.#error(
        "too_many_subscriptions",
        `At most ${core.limits.maxSubscriptions} subscriptions per connection`,
        sub,
        "subscribe",
      );
    }
    const topic = core.topics.get(frame.topic);
    if (topic === undefined) {
      return this.#error("unknown_topic", `Unknown topic "${frame.topic}"`, sub, "subscribe");
    }
    const access = await core.authorize(this.#user, topic.name, "subscribe");
    if (access !== "ok") {
      return this.#error(
        access,
        access === "unauthorized"
          ? `Subscribing to topic "${topic.name}" needs an authenticated user`
          : `Not allowed to subscribe to topic "${topic.name}"`,
        sub,
        "subscribe",
      );
    }
    if (this.#closed) return;
    const state: SubState = {
      topic,
      prefix: `{"type":"event","sub":${JSON.stringify(sub)},`,
      subscription: undefined,
      pending: [],
      closed: false,
    };
    this.#subs.set(sub, state);
    let subscription: RealtimeSubscription;
    try {
      subscription = await core.realtime.subscribe(
        topic.name,
        (m) => this.#deliver(state, m),
        {
          ...(frame.from !== undefined ? { from: frame.from } : {}),
          onGap: (gap) => this.#gap(sub, state, gap),
        },
      );
    } catch (error) {
      this.#subs.delete(sub);
      if (error instanceof RealtimeCursorError) {
        return this.#error(
          "unknown_cursor",
          `Cannot resume topic "${topic.name}" from "${frame.from}": the id was never issued`,
          sub,
          "subscribe",
        );
      }
      core.logger.error("eventServer(): realtime subscribe failed", {
        topic: topic.name,
        error: error as Error,
      });
      return this.#error(
        "internal",
        `Cannot subscribe to topic "${topic.name}" now`,
        sub,
        "subscribe",
      );
    }
    if (state.closed || this.#closed) {
      await subscription.close();
      return;
    }
    state.subscription = subscription;
    this.#send(JSON.stringify({
      type: "subscribed",
      sub,
      topic: topic.name,
      recovered: subscription.recovered,
    }));
    const pending = state.pending!;
    state.pending = undefined;
    for (const text of pending) this.#send(text);
  }

  #deliver(state: SubState, message: RealtimeMessage): void {
    if (state.closed) return;
    const text = state.prefix + eventTail(message, state.topic.channel);
    if (state.pending !== undefined) state.pending.push(text);
    else this.#send(text);
  }

  #gap(sub: string, state: SubState, gap: RealtimeGap): void {
    // A gap found while subscribing is reported by `recovered: false`.
    if (state.pending !== undefined || state.closed) return;
    this.#send(JSON.stringify({
      type: "gap",
      sub,
      topic: gap.topic,
      after: gap.after,
      reason: gap.reason,
    }));
  }

  async #unsubscribe(sub: string): Promise<void> {
    const state = this.#subs.get(sub);
    if (state === undefined) {
      return this.#error("unknown_subscription", `No subscription "${sub}"`, sub, "unsubscribe");
    }
    this.#subs.delete(sub);
    state.closed = true;
    await state.subscription?.close();
    this.#send(JSON.stringify({ type: "unsubscribed", sub }));
  }

  /** Pings, or closes a connection silent for two intervals. */
  beat(now: number): void {
    if (this.#closed) return;
    if (now - this.#lastSeen >= 2 * this.#core.limits.pingIntervalMs) {
      return this.#close(EVENTS_CLOSE_CODES.pingTimeout, "ping timeout");
    }
    this.#send('{"type":"ping"}');
  }

  /**
   * Closes with 1001 and waits until released and the close handshake is over (up to
   * `CLOSE_WAIT_MS`), so that the HTTP server's drain, which closes upgraded sockets with a reason
   * of its own, does not overtake the server's close frame.
   */
  shutdown(): Promise<void> {
    this.#done ??= this.#closed
      ? this.#released
      : new Promise((resolve) => this.#resolveDone = resolve);
    const socket = this.#socket;
    const open = socket.readyState !== WebSocket.CLOSED;
    this.#close(EVENTS_CLOSE_CODES.goingAway, "server stopping");
    if (!open) return this.#done;
    const clock = this.#core.clock;
    const handshake = new Promise<void>((resolve) => {
      const timer = clock.setTimeout(resolve, CLOSE_WAIT_MS);
      socket.addEventListener("close", () => {
        clock.clearTimeout(timer);
        resolve();
      }, { once: true });
    });
    return Promise.all([this.#done, handshake]).then(() => {});
  }

  #close(code: number, reason: string): void {
    if (this.#closed) return;
    try {
      this.#socket.close(code, reason);
    } catch {
      // already closed
    }
    this.#ended();
  }

  #ended(): void {
    if (this.#closed) return;
    this.#closed = true;
    this.#core.live.delete(this);
    const subs = [...this.#subs.values()];
    this.#subs.clear();
    for (const s of subs) s.closed = true;
    this.#released = Promise.allSettled(subs.map((s) => s.subscription?.close())).then(() => {
      this.#resolveDone?.();
    });
  }
}
