/**
 * The client side of the conformance runner: a WebSocket session that checks every frame it
 * receives against the server-frame schemas, an SSE reader, and the matching and variable
 * substitution the manifest's steps use. Internal.
 *
 * @module
 */

import { checkServerFrame } from "./schemas.ts";

/** A step failure: its message names the frame or field. */
export class StepFailure extends Error {
  constructor(message: string) {
    super(message);
    this.name = "StepFailure";
  }
}

/** Replaces `${name}` in every string of a JSON value; a string that is only `${name}` takes the value as is. */
export function substitute(value: unknown, vars: Record<string, unknown>): unknown {
  if (typeof value === "string") {
    const whole = /^\$\{(\w+)\}$/.exec(value);
    if (whole && whole[1] in vars) return vars[whole[1]];
    return value.replace(/\$\{(\w+)\}/g, (m, name) => name in vars ? String(vars[name]) : m);
  }
  if (Array.isArray(value)) return value.map((v) => substitute(v, vars));
  if (typeof value === "object" && value !== null) {
    return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, substitute(v, vars)]));
  }
  return value;
}

/**
 * Where `actual` differs from the partial `expected` (objects: every expected key; other values:
 * equal), or `undefined` when it matches.
 */
export function mismatch(expected: unknown, actual: unknown, path = ""): string | undefined {
  if (typeof expected === "object" && expected !== null && !Array.isArray(expected)) {
    if (typeof actual !== "object" || actual === null || Array.isArray(actual)) {
      return `${path || "value"} is ${JSON.stringify(actual)}, expected an object`;
    }
    for (const [k, v] of Object.entries(expected)) {
      const m = mismatch(v, (actual as Record<string, unknown>)[k], path ? `${path}.${k}` : k);
      if (m) return m;
    }
    return undefined;
  }
  if (JSON.stringify(expected) !== JSON.stringify(actual)) {
    return `${path || "value"} is ${JSON.stringify(actual)}, expected ${JSON.stringify(expected)}`;
  }
  return undefined;
}

/** Reads a dotted path (`a.b`) of a value. */
export function pick(value: unknown, path: string): unknown {
  let v = value;
  for (const k of path.split(".")) v = (v as Record<string, unknown> | undefined)?.[k];
  return v;
}

type Item = { frame: Record<string, unknown> } | { close: { code: number; reason: string } };

/** One WebSocket connection of the runner. Answers server pings and checks every frame. */
export class WsSession {
  readonly #ws: WebSocket;
  readonly #items: Item[] = [];
  #wake: (() => void) | undefined;
  #problem: string | undefined;
  readonly closed: Promise<void>;

  private constructor(ws: WebSocket) {
    this.#ws = ws;
    this.closed = new Promise((resolve) => {
      ws.onclose = (e) => {
        this.#push({ close: { code: e.code, reason: e.reason } });
        resolve();
      };
    });
    ws.onmessage = (e) => this.#receive(e.data);
  }

  /** Opens a connection. */
  static open(url: string, timeoutMs: number): Promise<WsSession> {
    const ws = new WebSocket(url);
    const session = new WsSession(ws);
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => {
        ws.close();
        reject(new StepFailure(`WebSocket ${url} did not open within ${timeoutMs} ms`));
      }, timeoutMs);
      ws.onopen = () => {
        clearTimeout(timer);
        resolve(session);
      };
      ws.onerror = () => {
        clearTimeout(timer);
        reject(new StepFailure(`WebSocket ${url} failed to open`));
      };
    });
  }

  #push(item: Item): void {
    this.#items.push(item);
    this.#wake?.();
  }

  #receive(data: unknown): void {
    if (typeof data !== "string") {
      this.#problem ??= "server sent a binary frame (frames are JSON text)";
      return this.#wake?.();
    }
    let frame: unknown;
    try {
      frame = JSON.parse(data);
    } catch {
      this.#problem ??= `server sent a frame that is not JSON: ${data.slice(0, 80)}`;
      return this.#wake?.();
    }
    const issues = checkServerFrame(frame);
    if (issues.length > 0) {
      this.#problem ??= issues.join("; ");
      return this.#wake?.();
    }
    const f = frame as Record<string, unknown>;
    if (f.type === "ping") {
      this.send(
        JSON.stringify(typeof f.id === "string" ? { type: "pong", id: f.id } : { type: "pong" }),
      );
      return;
    }
    this.#push({ frame: f });
  }

  /** Sends text or bytes. */
  send(data: string | Uint8Array): void {
    if (this.#ws.readyState === WebSocket.OPEN) this.#ws.send(data as string);
  }

  /** The next frame or close, failing on a frame that broke its schema. */
  async next(timeoutMs: number, waitingFor: string): Promise<Item> {
    const end = Date.now() + timeoutMs;
    for (;;) {
      if (this.#problem) throw new StepFailure(this.#problem);
      const item = this.#items.shift();
      if (item) return item;
      const left = end - Date.now();
      if (left <= 0) throw new StepFailure(`no ${waitingFor} within ${timeoutMs} ms`);
      let timer: ReturnType<typeof setTimeout> | undefined;
      await new Promise<void>((resolve) => {
        this.#wake = resolve;
        timer = setTimeout(resolve, left);
      });
      clearTimeout(timer);
      this.#wake = undefined;
    }
  }

  /** Closes and waits for the close. */
  async close(): Promise<void> {
    if (this.#ws.readyState === WebSocket.OPEN || this.#ws.readyState === WebSocket.CONNECTING) {
      this.#ws.close(1000);
    }
    await this.closed;
  }
}

/** One SSE event as read from a stream. */
export interface SseEvent {
  readonly event: string;
  readonly id: string | undefined;
  readonly data: string;
}

/** Reads SSE events from a response body. */
export class SseReader {
  readonly #reader: ReadableStreamDefaultReader<string>;
  #buffer = "";

  constructor(body: ReadableStream<Uint8Array>) {
    this.#reader = body.pipeThrough(new TextDecoderStream()).getReader();
  }

  /** The next event (comments skipped), or `undefined` when the stream ends. */
  async next(): Promise<SseEvent | undefined> {
    for (;;) {
      const normalised = this.#buffer.replace(/\r\n?/g, "\n");
      const end = normalised.indexOf("\n\n");
      if (end >= 0) {
        this.#buffer = normalised.slice(end + 2);
        let event = "message", id: string | undefined;
        const data: string[] = [];
        let any = false;
        for (const line of normalised.slice(0, end).split("\n")) {
          if (line.startsWith(":")) continue;
          const colon = line.indexOf(":");
          const field = colon < 0 ? line : line.slice(0, colon);
          const value = colon < 0 ? "" : line.slice(colon + 1).replace(/^ /, "");
          any = true;
          if (field === "event") event = value;
          else if (field === "id") id = value;
          else if (field === "data") data.push(value);
        }
        if (any) return { event, id, data: data.join("\n") };
        continue;
      }
      const { value, done } = await this.#reader.read();
      if (done) return undefined;
      this.#buffer += value;
    }
  }

  /** Stops reading. */
  async cancel(): Promise<void> {
    await this.#reader.cancel().catch(() => {});
  }
}
