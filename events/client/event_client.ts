/**
 * `eventClient({ url, token, reconnect })`: the browser and mobile client of the fw Event Server
 * (`fw.events.v1`). One WebSocket carries every subscription; a lost connection is re-opened with
 * full-jitter exponential back-off, a fresh token, and each subscription resumes after the last
 * stream id it received. Browser-safe: no Deno namespace, no server transport.
 *
 * @module
 */

import {
  type DiscoveryDocument,
  EVENTS_CLOSE_CODES,
  EVENTS_PROTOCOL,
  SERVER_FRAME_TYPES,
} from "../protocol/frames.ts";
import type { ClientState, EventClient, EventClientOptions } from "./client_types.ts";
import { payloadProblem, type ValidatorCache } from "./_payload_check.ts";
import { readDiscovery } from "./compatible.ts";
import { EventClientError } from "./errors.ts";
import {
  type ClientTopic,
  type EventMeta,
  type EventSubscription,
  type SubscribeOptions,
  SubscriptionRecord,
} from "./subscription.ts";

function positive(value: unknown, name: string, fallback: number): number {
  if (value === undefined) return fallback;
  if (typeof value !== "number" || !Number.isFinite(value) || value < 1) {
    throw new TypeError(`Invalid eventClient() option "${name}": expected a number >= 1`);
  }
  return value;
}

class Client implements EventClient {
  state: ClientState = "idle";
  connections = 0;
  discovery: DiscoveryDocument | undefined;
  readonly #o: EventClientOptions;
  readonly #subs = new Map<string, SubscriptionRecord<unknown>>();
  readonly #validators: ValidatorCache = new Map();
  readonly #reconnect: boolean;
  readonly #initial: number;
  readonly #max: number;
  #socket: WebSocket | undefined;
  #attempt = 0;
  #timer: ReturnType<typeof setTimeout> | undefined;
  #watchdog: ReturnType<typeof setInterval> | undefined;
  #lastSeen = 0;
  #nextSub = 0;

  constructor(o: EventClientOptions) {
    this.#o = o;
    this.#reconnect = o.reconnect !== false;
    const r = typeof o.reconnect === "object" ? o.reconnect : {};
    this.#initial = positive(r.initialDelayMs, "reconnect.initialDelayMs", 500);
    this.#max = positive(r.maxDelayMs, "reconnect.maxDelayMs", 30_000);
    if (this.#max < this.#initial) {
      throw new TypeError(
        'Invalid eventClient() option "reconnect.maxDelayMs": expected >= initialDelayMs',
      );
    }
  }

  subscribe<P>(
    topic: ClientTopic<P> | string,
    callback: (payload: P, meta: EventMeta) => void,
    options: SubscribeOptions = {},
  ): EventSubscription {
    const ref: ClientTopic<P> = typeof topic === "string" ? { name: topic } : topic;
    if (typeof ref?.name !== "string" || !ref.name) {
      throw new TypeError("Invalid topic for subscribe(): expected a topic or a topic name");
    }
    if (typeof callback !== "function") {
      throw new TypeError(`Invalid callback for subscribe("${ref.name}"): expected a function`);
    }
    if (this.state === "closed") {
      throw new TypeError(`Cannot subscribe to "${ref.name}": the client is closed`);
    }
    const rec = new SubscriptionRecord<P>(
      `s${++this.#nextSub}`,
      ref,
      callback,
      options,
      (r) => this.#unsubscribe(r as unknown as SubscriptionRecord<unknown>),
    );
    this.#subs.set(rec.sub, rec as unknown as SubscriptionRecord<unknown>);
    if (this.state === "open") this.#sendSubscribe(rec as unknown as SubscriptionRecord<unknown>);
    else if (this.state === "idle") void this.#connect();
    return rec;
  }

  close(): void {
    this.#setState("closed");
    clearTimeout(this.#timer);
    clearInterval(this.#watchdog);
    for (const rec of this.#subs.values()) rec.state = "closed";
    this.#subs.clear();
    const ws = this.#socket;
    this.#socket = undefined;
    if (ws && ws.readyState <= 1) ws.close(EVENTS_CLOSE_CODES.normal);
  }

  #setState(state: ClientState): void {
    if (this.state === state || this.state === "closed") return;
    this.state = state;
    this.#call(() => this.#o.onStateChange?.(state));
  }

  /** Runs a user callback; what it throws is reported, never propagated. */
  #call(fn: () => void, rec?: SubscriptionRecord<unknown>): void {
    try {
      fn();
    } catch (error) {
      const e = new EventClientError(
        "callback_failed",
        `A callback threw: ${(error as Error)?.message ?? String(error)}`,
        rec?.topic,
      );
      if (rec?.options.onError && fn !== rec.options.onError) {
        try {
          rec.options.onError(e);
          return;
        } catch { /* reported below */ }
      }
      try {
        this.#o.onError?.(e);
      } catch { /* nothing more to do */ }
    }
  }

  #report(error: EventClientError, rec?: SubscriptionRecord<unknown>): void {
    if (rec) {
      rec.lastError = error;
      if (rec.options.onError) return this.#call(() => rec.options.onError!(error), rec);
    }
    this.#call(() => this.#o.onError?.(error));
  }

  #reportAll(error: EventClientError): void {
    if (this.#subs.size === 0) return this.#report(error);
    for (const rec of this.#subs.values()) this.#report(error, rec);
  }

  async #connect(): Promise<void> {
    if (this.state === "closed") return;
    this.#setState("connecting");
    if (this.#o.discovery !== false && !this.discovery) {
      try {
        this.discovery = await readDiscovery(this.#o.url, this.#o.fetch ?? fetch);
      } catch (error) {
        if (error instanceof EventClientError && error.code !== "connection_lost") {
          return this.#fail(error);
        }
        if (error instanceof EventClientError) {
          this.#report(error);
          return this.#retry();
        }
        this.#report(
          new EventClientError(
            "connection_lost",
            `Cannot reach the Event Server: ${(error as Error).message}`,
          ),
        );
        return this.#retry();
      }
    }
    let token: string | undefined;
    if (this.#o.token) {
      try {
        token = await this.#o.token();
        if (typeof token !== "string" || !token) {
          throw new Error(`it returned ${token === "" ? "an empty string" : String(token)}`);
        }
      } catch (error) {
        this.#reportAll(
          new EventClientError(
            "token_failed",
            `The token function failed: ${(error as Error)?.message ?? String(error)}`,
          ),
        );
        return this.#retry();
      }
    }
    if ((this.state as ClientState) === "closed") return;
    const Ws = this.#o.WebSocket ?? WebSocket;
    let ws: WebSocket;
    try {
      ws = new Ws(this.#o.url);
    } catch (error) {
      return this.#fail(
        new EventClientError(
          "incompatible_server",
          `Invalid WebSocket URL "${this.#o.url}": ${(error as Error).message}`,
        ),
      );
    }
    this.#socket = ws;
    ws.onopen = () => {
      this.#lastSeen = Date.now();
      this.#send({ type: "hello", protocol: EVENTS_PROTOCOL, ...(token ? { token } : {}) });
    };
    ws.onmessage = (e) => {
      if (this.#socket === ws) this.#onFrame(e.data);
    };
    ws.onclose = (e) => {
      if (this.#socket === ws) this.#onClose(e.code, e.reason);
    };
    ws.onerror = () => {/* a close event follows */};
  }

  #fail(error: EventClientError): void {
    this.#reportAll(error);
    if (this.#subs.size > 0) this.#call(() => this.#o.onError?.(error));
    this.close();
  }

  #retry(): void {
    if (this.state === "closed") return;
    for (const rec of this.#subs.values()) rec.state = "reconnecting";
    if (!this.#reconnect) return this.close();
    const ceiling = Math.min(this.#max, this.#initial * 2 ** Math.min(this.#attempt, 30));
    const delayMs = Math.floor((this.#o.random ?? Math.random)() * ceiling);
    this.#attempt++;
    this.#setState("waiting");
    this.#call(() => this.#o.onRetry?.({ attempt: this.#attempt, delayMs }));
    clearTimeout(this.#timer);
    this.#timer = setTimeout(() => void this.#connect(), delayMs);
  }

  #onClose(code: number, reason: string): void {
    this.#socket = undefined;
    clearInterval(this.#watchdog);
    if (this.state === "closed") return;
    if (code === EVENTS_CLOSE_CODES.unsupportedProtocol) {
      return this.#fail(
        new EventClientError(
          "incompatible_server",
          `The server refused protocol "${EVENTS_PROTOCOL}"`,
        ),
      );
    }
    this.#report(
      new EventClientError(
        "connection_lost",
        `The connection closed (code ${code}${reason ? `: ${reason}` : ""})`,
      ),
    );
    this.#retry();
  }

  #send(frame: Record<string, unknown>): void {
    const ws = this.#socket;
    if (ws && ws.readyState === 1) ws.send(JSON.stringify(frame));
  }

  #sendSubscribe(rec: SubscriptionRecord<unknown>): void {
    rec.state = rec.lastId === undefined && rec.recovered === undefined
      ? "connecting"
      : "reconnecting";
    this.#send({
      type: "subscribe",
      sub: rec.sub,
      topic: rec.topic,
      ...(rec.lastId ? { from: rec.lastId } : {}),
    });
  }

  #unsubscribe(rec: SubscriptionRecord<unknown>): void {
    if (this.#subs.get(rec.sub) !== rec) return;
    this.#subs.delete(rec.sub);
    if (this.state === "open") this.#send({ type: "unsubscribe", sub: rec.sub });
  }

  #onFrame(data: unknown): void {
    this.#lastSeen = Date.now();
    let f: Record<string, unknown>;
    try {
      f = JSON.parse(String(data));
    } catch {
      return this.#report(
        new EventClientError("invalid_frame", "The server sent a frame that is not JSON"),
      );
    }
    if (typeof f !== "object" || f === null || !SERVER_FRAME_TYPES.has(f.type as string)) {
      const type = typeof f === "object" && f !== null ? String(f.type) : typeof f;
      return this.#report(
        new EventClientError("invalid_frame", `The server sent a frame of unknown type "${type}"`),
      );
    }
    const rec = typeof f.sub === "string" ? this.#subs.get(f.sub) : undefined;
    switch (f.type) {
      case "event":
        return rec ? this.#onEvent(rec, f) : undefined;
      case "welcome":
        return this.#onWelcome(f);
      case "subscribed": {
        if (!rec || typeof f.recovered !== "boolean") return;
        const resumed = rec.state === "reconnecting" && rec.lastId !== undefined;
        rec.state = "live";
        rec.recovered = f.recovered;
        const info = { recovered: f.recovered, resumed };
        if (rec.options.onSubscribed) this.#call(() => rec.options.onSubscribed!(info), rec);
        return;
      }
      case "gap":
        if (rec && rec.options.onGap) {
          const info = { after: String(f.after), reason: String(f.reason) };
          this.#call(() => rec.options.onGap!(info), rec);
        }
        return;
      case "ping":
        return this.#send({ type: "pong", ...(typeof f.id === "string" ? { id: f.id } : {}) });
      case "error":
        return this.#onError(f, rec);
      default:
        return; // pong, unsubscribed
    }
  }

  #onWelcome(f: Record<string, unknown>): void {
    this.#attempt = 0;
    this.connections++;
    this.#setState("open");
    const interval = typeof f.pingIntervalMs === "number" ? f.pingIntervalMs : 0;
    clearInterval(this.#watchdog);
    if (interval > 0) {
      this.#watchdog = setInterval(() => {
        if (Date.now() - this.#lastSeen > 2 * interval + 1000) this.#socket?.close();
      }, interval);
    }
    for (const rec of this.#subs.values()) this.#sendSubscribe(rec);
  }

  #onEvent(rec: SubscriptionRecord<unknown>, f: Record<string, unknown>): void {
    if (typeof f.id !== "string") {
      return this.#report(
        new EventClientError("invalid_frame", "The server sent an event without an id", rec.topic),
        rec,
      );
    }
    rec.lastId = f.id;
    let payload = f.payload;
    const problem = payloadProblem(rec.topicRef, this.discovery, this.#validators, payload);
    if (problem !== undefined) {
      return this.#report(
        new EventClientError(
          "invalid_payload",
          `Invalid payload for topic "${rec.topic}" (event "${f.id}"): ${problem}`,
          rec.topic,
        ),
        rec,
      );
    }
    if (rec.topicRef.validate) {
      const r = rec.topicRef.validate(payload);
      if (r.ok) payload = r.value;
    }
    const meta: EventMeta = typeof f.channel === "string"
      ? { id: f.id, topic: rec.topic, channel: f.channel }
      : { id: f.id, topic: rec.topic };
    if (rec.state !== "closed") this.#call(() => rec.callback(payload, meta), rec);
  }

  #onError(f: Record<string, unknown>, rec: SubscriptionRecord<unknown> | undefined): void {
    const code = typeof f.code === "string" ? f.code : "invalid_frame";
    const error = new EventClientError(
      code,
      typeof f.message === "string" ? f.message : code,
      rec?.topic,
    );
    if (rec && f.frame === "subscribe") {
      // A refused subscribe creates nothing: the subscription ends with the error.
      rec.state = "closed";
      this.#subs.delete(rec.sub);
      return this.#report(error, rec);
    }
    if (!rec && code === "unauthorized") return this.#reportAll(error);
    this.#report(error, rec);
  }
}

/**
 * Creates a client of an fw Event Server. Nothing connects until the first `subscribe()`.
 *
 * @param options `url`, `token`, `reconnect` and callbacks.
 * @returns The client.
 * @throws {TypeError} For invalid options.
 *
 * @example
 * ```ts ignore
 * import { eventClient } from "@fw/events/client";
 * const client = eventClient({
 *   url: "wss://events.example/events/ws",
 *   token: async () => `Bearer ${await getAccessToken()}`,
 * });
 * const sub = client.subscribe("orders.created", (order, { id }) => console.log(id, order), {
 *   onSubscribed: ({ recovered }) => recovered || console.warn("missed some orders"),
 *   onError: (e) => console.error(e.code, e.message),
 * });
 * sub.unsubscribe();
 * ```
 */
export function eventClient(options: EventClientOptions): EventClient {
  if (typeof options !== "object" || options === null) {
    throw new TypeError("Invalid eventClient() options: expected an object");
  }
  if (typeof options.url !== "string" || !/^wss?:\/\//.test(options.url)) {
    throw new TypeError(
      `Invalid eventClient() option "url": expected a ws:// or wss:// URL, got "${
        String(options.url)
      }"`,
    );
  }
  if (options.token !== undefined && typeof options.token !== "function") {
    throw new TypeError(
      'Invalid eventClient() option "token": expected an async function returning the Authorization value',
    );
  }
  return new Client(options);
}
