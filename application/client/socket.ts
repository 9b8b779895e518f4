/**
 * A WebSocket stream endpoint for the typed client: `send()` writes JSON (queued until the socket
 * opens), iterating yields each incoming message parsed, a `{"error": envelope}` message or an
 * abnormal close ends the iteration with an `ApiStreamError`, and a normal close ends it quietly.
 *
 * @module
 */

import { ApiStreamError, statusOf } from "./errors.ts";

/** An open WebSocket stream: typed `send()` and an async iterable of typed incoming messages. */
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
  /** The underlying socket. */
  readonly socket: WebSocket;
}

const NORMAL = new Set([1000, 1001, 1005]);

/**
 * Wraps an unopened WebSocket.
 *
 * @param ws The socket.
 * @param label `"GET /chat"`, for messages.
 * @param signal Closes the socket when aborted.
 * @returns The typed socket.
 */
export function apiSocket<In, Out>(
  ws: WebSocket,
  label: string,
  signal?: AbortSignal,
): ApiSocket<In, Out> {
  const queue: unknown[] = [];
  const pending: string[] = [];
  let waiting: (() => void) | undefined;
  let failure: ApiStreamError | undefined;
  let closed = false;
  const wake = () => {
    const w = waiting;
    waiting = undefined;
    w?.();
  };
  const opened = new Promise<void>((resolve, reject) => {
    ws.addEventListener("open", () => {
      for (const text of pending.splice(0)) ws.send(text);
      resolve();
    });
    ws.addEventListener("close", (e) => {
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
    });
  });
  opened.catch(() => {});
  ws.addEventListener("message", (e) => {
    let value: unknown = e.data;
    try {
      value = JSON.parse(String(e.data));
    } catch {
      // not JSON: keep the text
    }
    const envelope = (value as { error?: unknown } | null)?.error;
    if (
      envelope !== undefined && typeof envelope === "object" && Object.keys(value!).length === 1
    ) {
      const message = (envelope as { message?: unknown } | null)?.message;
      failure ??= new ApiStreamError(
        `Stream ${label} failed: ${message ?? JSON.stringify(envelope)}`,
        statusOf(envelope, Array.isArray((envelope as { errors?: unknown }).errors) ? 400 : 500),
        envelope,
      );
    } else queue.push(value);
    wake();
  });
  const write = (text: string) => {
    if (ws.readyState === WebSocket.CONNECTING) pending.push(text);
    else ws.send(text);
  };
  const onAbort = () => ws.close(1000);
  signal?.addEventListener("abort", onAbort, { once: true });
  async function* messages(): AsyncGenerator<Out> {
    try {
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
    socket: ws,
    opened,
    send(message: In): void {
      write(JSON.stringify(message));
    },
    end(): void {
      write("");
    },
    close(code = 1000, reason?: string): void {
      ws.close(code, reason);
    },
    [Symbol.asyncIterator]: () => messages(),
  };
}
