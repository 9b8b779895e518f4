/**
 * The SSE profile: `GET <base>/sse/<topic>` streams one topic as `text/event-stream`, resuming
 * after `Last-Event-ID` (or `?from=` on a first connection). The stream opens with an
 * `event: subscribed` event, then carries one message event per realtime message with the
 * stream id as its `id:`. Unsent bytes are bounded: a client that falls `maxBufferedBytes`
 * behind gets `event: error` (`slow_consumer`) and the stream ends. Internal.
 *
 * @module
 */

import type { AuthUser } from "@fw/runtime";
import {
  RealtimeCursorError,
  type RealtimeMessage,
  type RealtimeSubscription,
} from "../realtime/realtime.ts";
import type { Topic } from "../topic.ts";
import type { LiveClient, ServerCore } from "./_core.ts";
import { sseEventBytes, sseNamed } from "./_frames.ts";
import { httpError } from "./_http.ts";

const HEARTBEAT = new TextEncoder().encode(": ping\n\n");

class SseClient implements LiveClient {
  readonly readable: ReadableStream<Uint8Array>;
  #controller!: ReadableStreamDefaultController<Uint8Array>;
  #subscription: RealtimeSubscription | undefined;
  #pending: Uint8Array[] | undefined = [];
  #ended = false;
  readonly #done: Promise<void>;
  #resolveDone!: () => void;

  constructor(readonly core: ServerCore, readonly topic: Topic) {
    this.#done = new Promise((resolve) => this.#resolveDone = resolve);
    this.readable = new ReadableStream<Uint8Array>(
      {
        start: (controller) => void (this.#controller = controller),
        cancel: () => this.#end(),
      },
      new ByteLengthQueuingStrategy({ highWaterMark: core.limits.maxBufferedBytes }),
    );
  }

  deliver = (message: RealtimeMessage): void => {
    const bytes = sseEventBytes(message, this.topic.channel);
    if (this.#pending !== undefined) this.#pending.push(bytes);
    else this.#write(bytes);
  };

  gap(after: string, reason: string): void {
    if (this.#pending === undefined) {
      this.#write(sseNamed("gap", { topic: this.topic.name, after, reason }));
    }
  }

  live(subscription: RealtimeSubscription): void {
    this.#subscription = subscription;
    if (this.#ended) {
      void subscription.close();
      return;
    }
    this.#write(sseNamed("subscribed", {
      topic: this.topic.name,
      recovered: subscription.recovered,
    }));
    const pending = this.#pending!;
    this.#pending = undefined;
    for (const bytes of pending) this.#write(bytes);
    this.core.live.add(this);
  }

  /** Its one topic. */
  topics(): Iterable<string> {
    return [this.topic.name];
  }

  #write(bytes: Uint8Array): void {
    if (this.#ended) return;
    const desired = this.#controller.desiredSize ?? 0;
    if (desired < 0) {
      this.core.slowConsumerCloses++;
      this.#controller.enqueue(sseNamed("error", {
        code: "slow_consumer",
        message: "The client did not read fast enough: reconnect with Last-Event-ID",
      }));
      this.#finish();
      return;
    }
    this.#controller.enqueue(bytes);
  }

  beat(): void {
    this.#write(HEARTBEAT);
  }

  shutdown(): Promise<void> {
    this.#finish();
    return this.#done;
  }

  #finish(): void {
    if (this.#ended) return;
    try {
      this.#controller.close();
    } catch {
      // already closed
    }
    this.#end();
  }

  #end(): void {
    if (this.#ended) return;
    this.#ended = true;
    this.core.live.delete(this);
    const sub = this.#subscription;
    (sub ? sub.close() : Promise.resolve()).finally(() => this.#resolveDone());
  }
}

/**
 * Answers an SSE request for one topic.
 *
 * @param core The server's shared state.
 * @param req The request.
 * @param name The topic name from the path.
 * @param user The verified identity, if any.
 * @returns The event stream, or an error response.
 */
export async function serveSse(
  core: ServerCore,
  req: Request,
  name: string,
  user: AuthUser | undefined,
): Promise<Response> {
  const accept = req.headers.get("accept") ?? "";
  if (!accept.includes("text/event-stream") && !accept.includes("*/*")) {
    return httpError("not_acceptable", 'The SSE endpoint answers "Accept: text/event-stream" only');
  }
  if (core.stopping) {
    return httpError("unavailable", "The server is stopping", { retryAfterMs: 1000 });
  }
  const topic = core.topics.get(name);
  if (topic === undefined) return httpError("unknown_topic", `Unknown topic "${name}"`);
  const access = await core.authorize(user, name, "subscribe");
  if (access === "unauthorized") {
    return httpError("unauthorized", `Subscribing to topic "${name}" needs an authenticated user`);
  }
  if (access === "forbidden") {
    return httpError("forbidden", `Not allowed to subscribe to topic "${name}"`);
  }
  const from = req.headers.get("last-event-id") ?? new URL(req.url).searchParams.get("from") ??
    undefined;
  const client = new SseClient(core, topic);
  let subscription: RealtimeSubscription;
  try {
    subscription = await core.realtime.subscribe(name, client.deliver, {
      ...(from ? { from } : {}),
      onGap: (gap) => client.gap(gap.after, gap.reason),
    });
  } catch (error) {
    if (error instanceof RealtimeCursorError) {
      return httpError(
        "unknown_cursor",
        `Cannot resume topic "${name}" from "${from}": the id was never issued`,
      );
    }
    core.logger.error("eventServer(): realtime subscribe failed", {
      topic: name,
      error: error as Error,
    });
    return httpError("unavailable", "The realtime broker is unavailable", { retryAfterMs: 1000 });
  }
  client.live(subscription);
  return new Response(client.readable, {
    status: 200,
    headers: {
      "content-type": "text/event-stream; charset=utf-8",
      "cache-control": "no-cache",
      "x-accel-buffering": "no",
    },
  });
}
