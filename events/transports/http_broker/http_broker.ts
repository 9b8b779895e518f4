/**
 * `httpBrokerTransport({ url })`: the transport of a process that uses another process's local
 * development broker (`EVENTS_ENDPOINT=http://127.0.0.1:4222`). Publishes are HTTP calls;
 * each handler instance holds one WebSocket to the broker and reconnects when it drops.
 *
 * @module
 */

import type { Envelope } from "../../envelope.ts";
import {
  type Admission,
  type DeadLetter,
  type DeadLetterStore,
  type Delivery,
  type DeliveryListener,
  QueueFullError,
  type Subscription,
  type SubscriptionSpec,
  type Transport,
  type TransportCapabilities,
  type TransportPublishOptions,
} from "../../transport.ts";
import { MEMORY_MAX_DELAY_MS } from "../memory_broker.ts";

/** Options of {@linkcode httpBrokerTransport}. */
export interface HttpBrokerOptions {
  /** Broker base URL, for example `http://127.0.0.1:4222`. */
  url: string;
  /** Longest wait between reconnection attempts in ms (default 5000). */
  maxReconnectDelayMs?: number;
}

/** How long a refused delivery waits before the broker offers it again (ms). */
const REFUSED_RETRY_MS = 1000;

class HttpBrokerTransport implements Transport {
  readonly name = "local";
  readonly capabilities: TransportCapabilities = {
    ordering: false,
    persistent: false,
    external: true,
    admission: false,
    // Delayed messages wait in the broker's process, on its memory broker.
    maxDelay: MEMORY_MAX_DELAY_MS,
  };
  readonly deadLetters: DeadLetterStore;
  readonly #base: string;
  readonly #maxDelay: number;
  readonly #subs = new Set<RemoteSubscription>();

  constructor(options: HttpBrokerOptions) {
    let base: URL;
    try {
      base = new URL(options.url);
    } catch {
      throw new TypeError(`Invalid events endpoint "${options.url}": expected an http(s) URL`);
    }
    if (base.protocol !== "http:" && base.protocol !== "https:") {
      throw new TypeError(`Invalid events endpoint "${options.url}": expected an http(s) URL`);
    }
    this.#base = base.href.replace(/\/+$/, "");
    this.#maxDelay = options.maxReconnectDelayMs ?? 5000;
    const call = this.#call.bind(this);
    this.deadLetters = {
      list: (o = {}) =>
        call(
          "GET",
          `/dead-letters${o.topic ? `?topic=${encodeURIComponent(o.topic)}` : ""}`,
        ) as Promise<
          DeadLetter[]
        >,
      take: (ids) => call("POST", "/dead-letters/take", { ids }) as Promise<DeadLetter[]>,
    };
  }

  async #call(method: string, path: string, body?: unknown): Promise<unknown> {
    const res = await fetch(this.#base + path, {
      method,
      ...(body === undefined ? {} : {
        body: JSON.stringify(body),
        headers: { "content-type": "application/json" },
      }),
    });
    const text = await res.text();
    if (res.ok) return text ? JSON.parse(text) : undefined;
    let message = text;
    try {
      message = JSON.parse(text).message ?? text;
    } catch { /* not JSON */ }
    if (res.status === 503 && path.startsWith("/publish")) {
      const topic = (body as Envelope).topic;
      const err = new QueueFullError(topic, []);
      err.message = message;
      throw err;
    }
    throw new Error(
      `Events broker ${this.#base} answered ${res.status} to ${method} ${path}: ${message}`,
    );
  }

  async publish(envelope: Envelope, options?: TransportPublishOptions): Promise<void> {
    const at = options?.deliverAt;
    await this.#call("POST", at === undefined ? "/publish" : `/publish?deliverAt=${at}`, envelope);
  }

  async deadLetter(envelope: Envelope): Promise<void> {
    await this.#call("POST", "/dead-letter", envelope);
  }

  async subscribe(spec: SubscriptionSpec, listener: DeliveryListener): Promise<Subscription> {
    const q = new URLSearchParams({
      topic: spec.topic,
      group: spec.group,
      distribution: spec.distribution,
      instance: spec.instanceId,
    });
    const wsUrl = `${this.#base.replace(/^http/, "ws")}/subscribe?${q}`;
    const sub = new RemoteSubscription(
      wsUrl,
      listener,
      this.#maxDelay,
      () => this.#subs.delete(sub),
    );
    this.#subs.add(sub);
    await sub.connected;
    return sub;
  }

  async close(): Promise<void> {
    await Promise.all([...this.#subs].map((s) => s.close()));
  }
}

class RemoteSubscription implements Subscription {
  readonly connected: Promise<void>;
  #resolveConnected!: () => void;
  #rejectConnected!: (err: Error) => void;
  #socket: WebSocket | undefined;
  #closed = false;
  #delay = 100;
  #timer: ReturnType<typeof setTimeout> | undefined;
  #everConnected = false;

  constructor(
    readonly url: string,
    readonly listener: DeliveryListener,
    readonly maxDelay: number,
    readonly onClose: () => void,
  ) {
    this.connected = new Promise((resolve, reject) => {
      this.#resolveConnected = resolve;
      this.#rejectConnected = reject;
    });
    this.#open();
  }

  #open(): void {
    const ws = new WebSocket(this.url);
    this.#socket = ws;
    ws.onmessage = (ev) => {
      let frame: { type?: string; seq?: number; attempt?: number; envelope?: Envelope };
      try {
        frame = JSON.parse(String(ev.data));
      } catch {
        return;
      }
      if (frame.type === "subscribed") {
        this.#everConnected = true;
        this.#delay = 100;
        this.#resolveConnected();
        return;
      }
      if (frame.type !== "deliver" || typeof frame.seq !== "number") return;
      this.#deliver(ws, frame.seq, frame.attempt ?? 1, frame.envelope as Envelope);
    };
    ws.onerror = () => {};
    ws.onclose = (ev) => {
      if (this.#closed) return;
      if (!this.#everConnected && (ev.code === 1008 || this.#delay >= this.maxDelay)) {
        this.#closed = true;
        this.onClose();
        this.#rejectConnected(
          new Error(
            `Cannot subscribe through the events broker at ${this.url}: ${
              ev.reason || "connection failed"
            }`,
          ),
        );
        return;
      }
      this.#timer = setTimeout(() => this.#open(), this.#delay);
      this.#delay = Math.min(this.#delay * 2, this.maxDelay);
    };
  }

  #deliver(ws: WebSocket, seq: number, attempt: number, envelope: Envelope): void {
    let answered = false;
    const answer = (frame: Record<string, unknown>) => {
      if (answered) return Promise.resolve();
      answered = true;
      // After a reconnect the broker has already redelivered what this socket held.
      if (ws.readyState === WebSocket.OPEN) ws.send(JSON.stringify({ ...frame, seq }));
      return Promise.resolve();
    };
    const delivery: Delivery = {
      envelope,
      attempt,
      ack: () => answer({ type: "ack" }),
      retry: (delay) => answer({ type: "retry", delay }),
    };
    const admission: Admission = this.listener(delivery);
    if (admission === "rejected") void answer({ type: "retry", delay: REFUSED_RETRY_MS });
  }

  close(): Promise<void> {
    if (this.#closed) return Promise.resolve();
    this.#closed = true;
    clearTimeout(this.#timer);
    this.onClose();
    const ws = this.#socket;
    if (!ws || ws.readyState === WebSocket.CLOSED) return Promise.resolve();
    return new Promise((resolve) => {
      ws.addEventListener("close", () => resolve(), { once: true });
      ws.close(1000, "unsubscribe");
    });
  }
}

/**
 * A transport that talks to a local development broker over HTTP and WebSockets.
 *
 * @param options The broker URL.
 * @returns The transport.
 * @throws {TypeError} For a URL that is not http(s).
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { httpBrokerTransport } from "@fw/events";
 * const t = httpBrokerTransport({ url: "http://127.0.0.1:4222" });
 * assert.equal(t.capabilities.external, true);
 * assert.throws(() => httpBrokerTransport({ url: "nats://x" }), /expected an http\(s\) URL/);
 * ```
 */
export function httpBrokerTransport(options: HttpBrokerOptions): Transport {
  return new HttpBrokerTransport(options);
}
