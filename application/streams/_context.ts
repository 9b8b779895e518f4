/**
 * The `ctx` of stream endpoints. The registry of open stream connections lives in
 * `_registry.ts`, which `Application.stop()` imports without loading the stream code.
 *
 * @module
 */

import type { RequestInfo, Validator } from "@fw/runtime";
import type { StreamSendOptions, StreamTransport } from "../endpoint_types.ts";
import { type ContextShared, type RawParams, RequestContext } from "../request_context.ts";
import type { SseStream } from "./sse.ts";
import type { WebSocketChannel } from "./websocket.ts";

export { type LiveStream, streamRegistry } from "./_registry.ts";

const EMPTY: AsyncIterableIterator<never> = {
  next: () => Promise.resolve({ done: true, value: undefined }),
  return: () => Promise.resolve({ done: true, value: undefined }),
  [Symbol.asyncIterator]: () => EMPTY,
};

/** Per-endpoint facts of a stream `ctx`, shared by every connection of that endpoint. */
export interface StreamShared {
  /** Validator of outgoing messages. */
  readonly outbound: Validator<unknown> | undefined;
  /** `METHOD /route`, for error messages. */
  readonly label: string;
  /** Whether `messages()` yields the channel's messages (client-stream and bidi). */
  readonly streamIn: boolean;
}

/**
 * The `ctx` of a stream endpoint (the interfaces `StreamContext` / `ServerStreamContext`). An
 * idle connection keeps it, so it holds only its transport, the body and the endpoint's shared
 * facts; `transport` and `lastEventId` are read from the request when asked for.
 */
export class StreamRequestContext extends RequestContext {
  /** The SSE stream, when the transport is SSE. */
  _sse: SseStream | undefined = undefined;
  /** The WebSocket channel, when the transport is a WebSocket. */
  _ws: WebSocketChannel | undefined = undefined;
  /** Messages sent (for the connection's span). */
  _sent = 0;
  readonly #stream: StreamShared;

  /**
   * @param req The request.
   * @param params Raw path parameters.
   * @param info Connection facts.
   * @param shared Per-endpoint facts.
   * @param stream Per-endpoint stream facts.
   */
  constructor(
    req: Request,
    params: RawParams,
    info: RequestInfo,
    shared: ContextShared,
    stream: StreamShared,
  ) {
    super(req, params, info, shared);
    this.#stream = stream;
  }

  /** The transport. */
  get transport(): StreamTransport {
    if (this._ws !== undefined) return "websocket";
    if (this._sse !== undefined) return "sse";
    return this.req.headers.get("upgrade")?.toLowerCase() === "websocket" ? "websocket" : "sse";
  }

  /** The `Last-Event-ID` request header. */
  get lastEventId(): string | undefined {
    return this.req.headers.get("last-event-id") ?? undefined;
  }

  /** Aborted when the connection ends. */
  get signal(): AbortSignal {
    return (this._sse ?? this._ws)!.signal;
  }

  /**
   * Validates and sends one message.
   *
   * @param message The message.
   * @param options SSE id and event name.
   * @returns Settles when the transport has room.
   */
  send(message: unknown, options?: StreamSendOptions): Promise<void> {
    return this.sendValidated(message, this.#stream.outbound, options);
  }

  /**
   * Validates a message with `check` (when given) and sends what the validator returns.
   *
   * @param message The message.
   * @param check The validator.
   * @param options SSE id and event name.
   * @returns Settles when the transport has room.
   */
  sendValidated(
    message: unknown,
    check: Validator<unknown> | undefined,
    options?: StreamSendOptions,
  ): Promise<void> {
    let value = message;
    if (check !== undefined) {
      const r = check(message);
      if (!r.ok) {
        const detail = r.errors.map((e) => e.message).join("; ");
        return Promise.reject(
          new TypeError(`Invalid message sent by "${this.#stream.label}": ${detail}`),
        );
      }
      value = r.value;
    }
    const text = JSON.stringify(value);
    this._sent++;
    return this._sse !== undefined ? this._sse.sendJson(text, options) : this._ws!.sendText(text);
  }

  /** Incoming messages (client-stream and bidi over a WebSocket); empty otherwise. */
  messages(): AsyncIterableIterator<unknown> {
    return this.#stream.streamIn && this._ws !== undefined ? this._ws.messages() : EMPTY;
  }

  /** The body of a server-stream (validated before the handler ran). */
  override body(): Promise<unknown> {
    return Promise.resolve(this._bodyValue);
  }
}
