/**
 * The live subscribers of `deno task cluster`, through the balancer: `eventClient` over the Event
 * Server's WebSocket (resumes by itself after a close), and the browser's `EventSource` over its
 * SSE endpoint (reconnects by itself with `Last-Event-ID` after the stream ends; re-created with
 * `?from=` when a reconnect is refused, as a page would). Each records the ids it receives.
 *
 * @module
 */

import { type EventClient, eventClient } from "@fw/events/client";

/** One live subscriber and what it saw. */
export abstract class Subscriber {
  /** Ids received, in order of arrival. */
  readonly ids: string[] = [];
  /** `subscribed` answers with `recovered: true` / `false`. */
  recovered = 0;
  notRecovered = 0;
  /** Gaps the server reported. */
  gaps = 0;
  /** Errors or lost connections the client reported (the first one's message kept). */
  notices = 0;
  firstNotice: string | undefined;

  /**
   * @param kind `ws` or `sse`.
   * @param from The stream id it subscribed after.
   */
  constructor(readonly kind: "ws" | "sse", readonly from: string) {}

  /** Connections opened so far. */
  abstract get connections(): number;

  /** Stops the subscriber. */
  abstract close(): void;

  protected notice(message: string): void {
    this.notices++;
    this.firstNotice ??= message;
  }

  protected subscribed(recovered: boolean): void {
    if (recovered) this.recovered++;
    else this.notRecovered++;
  }
}

/** An `eventClient` subscription over the Event Server's WebSocket. */
export class WsSubscriber extends Subscriber {
  readonly #client: EventClient;

  constructor(base: string, topic: string, from: string) {
    super("ws", from);
    this.#client = eventClient({
      url: base.replace(/^http/, "ws") + "/events/ws",
      reconnect: { initialDelayMs: 200, maxDelayMs: 3_000 },
      onError: (e) => this.notice(e.message),
    });
    this.#client.subscribe(topic, (_payload, meta) => void this.ids.push(meta.id), {
      from,
      onSubscribed: (info) => this.subscribed(info.recovered),
      onGap: () => void this.gaps++,
      onError: (e) => this.notice(e.message),
    });
  }

  get connections(): number {
    return this.#client.connections;
  }

  close(): void {
    this.#client.close();
  }
}

/** An `EventSource` on the Event Server's SSE endpoint. */
export class SseSubscriber extends Subscriber {
  #source: EventSource | undefined;
  #opened = 0;
  #closed = false;

  constructor(readonly base: string, readonly topic: string, from: string) {
    super("sse", from);
    this.#open();
  }

  #open(): void {
    if (this.#closed) return;
    const after = this.ids.at(-1) ?? this.from;
    const source = this.#source = new EventSource(
      `${this.base}/events/sse/${encodeURIComponent(this.topic)}?from=${after}`,
    );
    source.onopen = () => void this.#opened++;
    source.onmessage = (e) => void this.ids.push(e.lastEventId);
    source.addEventListener("subscribed", (e) => {
      this.subscribed(JSON.parse((e as MessageEvent).data).recovered === true);
    });
    source.addEventListener("gap", () => void this.gaps++);
    source.onerror = () => {
      this.notice("the SSE connection was lost");
      if (source.readyState === EventSource.CLOSED) {
        // refused (a non-200 answer): EventSource gives up; open a new one after a pause
        setTimeout(() => this.#open(), 500);
      }
    };
  }

  get connections(): number {
    return this.#opened;
  }

  close(): void {
    this.#closed = true;
    this.#source?.close();
  }
}
