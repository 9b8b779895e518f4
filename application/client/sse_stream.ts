/**
 * Server-Sent Events over `fetch` for the typed client: parses `text/event-stream` (`id:`,
 * `event:`, `data:`, `retry:`, comments), yields each message's JSON data, throws the `error`
 * event's envelope, and reconnects with `Last-Event-ID` when the connection drops after the server
 * sent ids. Built on `fetch` rather than `EventSource` so it can send headers (a token), take a
 * custom transport (`app.request`) and stop on an `AbortSignal`.
 *
 * @module
 */

import { ApiStreamError, statusOf } from "./errors.ts";

/** One parsed event. */
interface SseEvent {
  id: string | undefined;
  event: string;
  data: string;
}

/** Opens the stream: the request with `Last-Event-ID` when given. */
export type SseOpen = (lastEventId: string | undefined) => Promise<Response>;

/** What the SSE reader needs to know. */
export interface SseSettings {
  /** `"GET /prices"`, for messages. */
  label: string;
  /** Resume after this id. */
  lastEventId?: string;
  /** Reconnections allowed after a drop. */
  retries: number;
  /** Wait before reconnecting unless the server sent `retry:`. */
  retryDelayMs: number;
  /** Stops the stream. */
  signal?: AbortSignal;
  /** Called each time the stream (re)opens. */
  onOpen?: () => void;
}

/** An async iterable of a stream's messages, with the id of the last one received. */
export interface ApiEventStream<T> extends AsyncIterable<T> {
  /** The id of the last event received (what a resumed stream sends as `Last-Event-ID`). */
  readonly lastEventId: string | undefined;
}

async function* events(body: ReadableStream<Uint8Array>): AsyncGenerator<SseEvent | number> {
  const reader = body.getReader();
  const decoder = new TextDecoder();
  let buffer = "";
  let id: string | undefined;
  let event = "";
  let data: string[] = [];
  try {
    while (true) {
      const { value, done } = await reader.read();
      if (done) return;
      buffer += decoder.decode(value, { stream: true });
      let nl: number;
      while ((nl = buffer.search(/\r\n|\r|\n/)) !== -1) {
        const line = buffer.slice(0, nl);
        buffer = buffer.slice(nl + (buffer[nl] === "\r" && buffer[nl + 1] === "\n" ? 2 : 1));
        if (line === "") {
          if (data.length) yield { id, event: event || "message", data: data.join("\n") };
          event = "";
          data = [];
          continue;
        }
        const colon = line.indexOf(":");
        const field = colon === -1 ? line : line.slice(0, colon);
        let val = colon === -1 ? "" : line.slice(colon + 1);
        if (val[0] === " ") val = val.slice(1);
        if (field === "data") data.push(val);
        else if (field === "event") event = val;
        else if (field === "id" && !val.includes("\0")) id = val;
        else if (field === "retry" && /^\d+$/.test(val)) yield Number(val);
      }
    }
  } finally {
    reader.cancel().catch(() => {});
  }
}

async function refusal(res: Response, label: string): Promise<ApiStreamError> {
  const text = await res.text().catch(() => "");
  let body: unknown = text;
  try {
    body = JSON.parse(text);
  } catch {
    // not JSON: keep the text
  }
  const message = (body as { message?: unknown } | null)?.message;
  return new ApiStreamError(
    `Cannot open stream ${label}: ${res.status}${typeof message === "string" ? ` ${message}` : ""}`,
    res.status,
    body,
  );
}

/** JSON data, or the text itself when it is not JSON. */
function parse(data: string): unknown {
  try {
    return JSON.parse(data);
  } catch {
    return data;
  }
}

function wait(ms: number, signal: AbortSignal | undefined): Promise<void> {
  return new Promise((resolve) => {
    const timer = setTimeout(done, ms);
    signal?.addEventListener("abort", done, { once: true });
    function done() {
      clearTimeout(timer);
      signal?.removeEventListener("abort", done);
      resolve();
    }
  });
}

/**
 * Reads a server stream.
 *
 * @param open Sends the request.
 * @param settings Label, resume id, retries and signal.
 * @returns The messages.
 */
export function sseStream<T>(open: SseOpen, settings: SseSettings): ApiEventStream<T> {
  let lastEventId = settings.lastEventId;
  async function* run(): AsyncGenerator<T> {
    let retries = settings.retries;
    let delay = settings.retryDelayMs;
    while (true) {
      const res = await open(lastEventId);
      if (!res.ok || !res.body) throw await refusal(res, settings.label);
      settings.onOpen?.();
      try {
        for await (const e of events(res.body)) {
          if (typeof e === "number") {
            delay = e;
            continue;
          }
          if (e.id !== undefined) lastEventId = e.id;
          const value = parse(e.data);
          if (e.event === "error") {
            const message = (value as { message?: unknown })?.message;
            throw new ApiStreamError(
              `Stream ${settings.label} failed: ${message ?? e.data}`,
              statusOf(value, 500),
              value,
            );
          }
          retries = settings.retries;
          yield value as T;
        }
        return;
      } catch (error) {
        if (error instanceof ApiStreamError || settings.signal?.aborted) throw error;
        if (lastEventId === undefined || retries-- <= 0) {
          throw new ApiStreamError(
            `Stream ${settings.label} lost its connection: ${(error as Error).message}`,
            0,
          );
        }
      }
      await wait(delay, settings.signal);
      if (settings.signal?.aborted) throw settings.signal.reason;
    }
  }
  const iterable = {
    get lastEventId() {
      return lastEventId;
    },
    [Symbol.asyncIterator]: () => run(),
  };
  return iterable;
}
