/**
 * A WebSocket stream endpoint for the typed client: `send()` writes JSON (queued until the socket
 * opens), iterating yields each incoming message parsed, a `{"error": envelope}` message or an
 * abnormal close ends the iteration with an `ApiStreamError`, and a normal close ends it quietly.
 *
 * @module
 */

import { ApiStreamError, statusOf } from "./errors.ts";

/**
 * A WebSocket stream: typed `send()` and an async iterable of typed incoming messages. The socket
 * opens once the token (when there is one) is known; messages sent before that are queued.
 */
export interface ApiSocket<In, Out> extends AsyncIterable<Out> {
  /** Sends one message as JSON; before the socket is open it is queued. */
  send(message: In): void;
  /**
   * Ends the client's stream (an empty frame): a client-stream handler then sends its result as
   * the last message and the server closes the socket.
   */
  end(): void;
  /** Closes the socket (default code 1000); iteration then ends. */
  close(code?: number, reason?: string): void;
  /** Settles when the socket is open; rejects when it cannot open. */
  readonly opened: Promise<void>;
}

const NORMAL = new Set([1000, 1001, 1005]);

/**
 * Wraps a WebSocket that is being created.
 *
 * @param created The socket, once the token is known.
 * @param label `"GET /chat"`, for messages.
 * @param signal Closes the socket when aborted.
 * @returns The typed socket.
 */
export function apiSocket<In, Out>(
  created: Promise<WebSocket>,
  label: string,
  signal?: AbortSignal,
): ApiSocket<In, Out> {
  const queue: unknown[] = [];
  const pending: string[] = [];
  let ws: WebSocket | undefined;
  let waiting: (() => void) | undefined;
  let failure: ApiStreamError | undefined;
  let closed = false;
  const wake = () => {
    const w = waiting;
    waiting = undefined;
    w?.();
  };
  const opened = created.then((socket) =>
    new Promise<void>((resolve, reject) => {
      ws = socket;
      socket.onopen = () => {
        for (const text of pending.splice(0)) socket.send(text);
        resolve();
      };
      socket.onclose = (e) => {
        closed = true;
        if (!failure && !NORMAL.has(e.code)) {
          failure = new ApiStreamError(
            `Stream ${label} closed with code ${e.code}${e.reason ? `: ${e.reason}` : ""}`,
            0,
            undefined,
            e.code,
          );
        }
        if (failure) reject(failure);
        else resolve();
        wake();
      };
      socket.onmessage = (e) => {
        let value: unknown = e.data;
        try {
          value = JSON.parse(e.data);
        } catch {
          // not JSON: keep the text
        }
        const envelope = (value as { error?: { message?: unknown; errors?: unknown } } | null)
          ?.error;
        if (typeof envelope === "object" && Object.keys(value!).length === 1) {
          failure ??= new ApiStreamError(
            `Stream ${label} failed: ${envelope?.message ?? JSON.stringify(envelope)}`,
            statusOf(envelope, Array.isArray(envelope?.errors) ? 400 : 500),
            envelope,
          );
        } else queue.push(value);
        wake();
      };
      if (signal?.aborted) socket.close(1000);
    })
  );
  opened.catch(() => {});
  const write = (text: string) => {
    if (ws?.readyState === 1) ws.send(text);
    else pending.push(text);
  };
  const close = (code = 1000, reason?: string) => {
    if (ws) ws.close(code, reason);
    else created.then((s) => s.close(code, reason), () => {});
  };
  const onAbort = () => close();
  signal?.addEventListener("abort", onAbort, { once: true });
  async function* messages(): AsyncGenerator<Out> {
    try {
      await created;
      while (true) {
        if (queue.length) {
          yield queue.shift() as Out;
          continue;
        }
        if (failure) throw failure;
        if (closed) return;
        await new Promise<void>((resolve) => waiting = resolve);
      }
    } finally {
      signal?.removeEventListener("abort", onAbort);
    }
  }
  return {
    opened,
    send: (message: In) => write(JSON.stringify(message)),
    end: () => write(""),
    close,
    [Symbol.asyncIterator]: () => messages(),
  };
}
