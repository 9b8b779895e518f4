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

/** The `ctx` of a stream endpoint (the interfaces `StreamContext` / `ServerStreamContext`). */
export class StreamRequestContext extends RequestContext {
  /** The transport. */
  readonly transport: StreamTransport;
  /** The `Last-Event-ID` request header. */
  readonly lastEventId: string | undefined;
  /** The SSE stream, when `transport` is `"sse"`. */
  _sse: SseStream | undefined = undefined;
  /** The WebSocket channel, when `transport` is `"websocket"`. */
  _ws: WebSocketChannel | undefined = undefined;
  /** Whether `messages()` yields the channel's messages (client-stream and bidi). */
  _streamIn = false;
  /** The validated body (server-stream). */
  _streamBody: unknown = undefined;
  readonly #outbound: Validator<unknown> | undefined;
  readonly #label: string;

  /**
   * @param req The request.
   * @param params Raw path parameters.
   * @param info Connection facts.
   * @param shared Per-endpoint facts.
   * @param transport The transport.
   * @param outbound Validator of outgoing messages.
   * @param label `METHOD /route`, for error messages.
   */
  constructor(
    req: Request,
    params: RawParams,
    info: RequestInfo,
    shared: ContextShared,
    transport: StreamTransport,
    outbound: Validator<unknown> | undefined,
    label: string,
  ) {
    super(req, params, info, shared);
    this.transport = transport;
    this.lastEventId = req.headers.get("last-event-id") ?? undefined;
    this.#outbound = outbound;
    this.#label = label;
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
    return this.sendValidated(message, this.#outbound, options);
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
          new TypeError(`Invalid message sent by "${this.#label}": ${detail}`),
        );
      }
      value = r.value;
    }
    const text = JSON.stringify(value);
    return this._sse !== undefined ? this._sse.sendJson(text, options) : this._ws!.sendText(text);
  }

  /** Incoming messages (client-stream and bidi over a WebSocket); empty otherwise. */
  messages(): AsyncIterableIterator<unknown> {
    return this._streamIn && this._ws !== undefined ? this._ws.messages() : EMPTY;
  }

  /** The body of a server-stream (validated before the handler ran). */
  override body(): Promise<unknown> {
    return Promise.resolve(this._streamBody);
  }
}
