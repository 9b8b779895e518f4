/**
 * Server-Sent Events: the wire encoding and a bounded, pull-based event stream for one client.
 *
 * {@linkcode SseStream} produces the body of a `text/event-stream` response. Events carry a
 * monotonic `id:` (continuing after the client's `Last-Event-ID` when it is a number) and JSON
 * `data:`; a comment is written every `heartbeatMs` (15 s) so proxies keep the connection open.
 * The body is pull-based: events wait in a queue of at most `highWaterMark` bytes until the socket
 * takes them, and `send()` resolves only once its event fits, so a client that stops reading
 * stops the sender instead of growing server memory. When the client goes away the stream
 * aborts its `signal`, clears its timer and rejects pending and later sends with the abort reason.
 *
 * @module
 */

import { type Clock, systemClock } from "@fw/runtime";
import { Deadline } from "./_timers.ts";

/** Default interval between heartbeat comments (15 s). */
export const DEFAULT_HEARTBEAT_MS = 15_000;
/** Default bound of the queue of unsent events, in UTF-16 code units (about bytes). */
export const DEFAULT_SSE_HIGH_WATER_MARK: number = 64 * 1024;

const encoder = new TextEncoder();
const FIELD_BREAK = /[\r\n\0]/;
const LINE_BREAK = /\r\n|\r|\n/;
const HEARTBEAT = ": ping\n\n";
/** Queued text beyond this many high-water marks means `send()` was not awaited. */
const HARD_LIMIT_FACTOR = 8;

/** The fields of one event. */
export interface SseEventFields {
  /** Event id (`id:`); the client echoes the last one in `Last-Event-ID` when it reconnects. */
  id?: string | number;
  /** Event name (`event:`); without one the browser dispatches a `message` event. */
  event?: string;
  /** Reconnection delay the client should use, in milliseconds (`retry:`). */
  retry?: number;
}

/** Options of one `send()`. */
export interface SseSendOptions {
  /** Explicit id; a number also moves the automatic counter. Default: the next number. */
  id?: string | number;
  /** Event name. */
  event?: string;
}

/** Options of {@linkcode SseStream}. */
export interface SseStreamOptions {
  /** Clock for heartbeats (default: the system clock). */
  clock?: Clock;
  /** Milliseconds between heartbeat comments; 0 turns them off. Default 15 000. */
  heartbeatMs?: number;
  /** Most text queued before `send()` waits for the client (default 64 KiB). */
  highWaterMark?: number;
  /** The request's `Last-Event-ID`; a non-negative integer makes ids continue after it. */
  lastEventId?: string;
  /** Sends `retry:` first, telling the browser how long to wait before reconnecting. */
  retryMs?: number;
}

function checkField(value: string, name: string): string {
  if (FIELD_BREAK.test(value)) {
    throw new TypeError(`Invalid SSE ${name} ${JSON.stringify(value)}: it must be a single line`);
  }
  return value;
}

/**
 * Encodes one event in the `text/event-stream` format. Multi-line data becomes several `data:`
 * lines (the browser joins them with `\n`).
 *
 * @param data The data (JSON text for fw streams).
 * @param fields Id, event name and retry delay.
 * @returns The event text, ending with a blank line.
 * @throws {TypeError} When the id or event name contains a line break or NUL.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { encodeSseEvent } from "@fw/application/streams";
 * assert.equal(encodeSseEvent('{"n":1}', { id: 7 }), 'id: 7\ndata: {"n":1}\n\n');
 * assert.equal(encodeSseEvent("a\nb", { event: "note" }), "event: note\ndata: a\ndata: b\n\n");
 * ```
 */
export function encodeSseEvent(data: string, fields: SseEventFields = {}): string {
  let out = "";
  if (fields.event !== undefined) out += `event: ${checkField(fields.event, "event name")}\n`;
  if (fields.id !== undefined) out += `id: ${checkField(String(fields.id), "id")}\n`;
  if (fields.retry !== undefined) out += `retry: ${Math.max(0, Math.floor(fields.retry))}\n`;
  if (data.indexOf("\n") < 0 && data.indexOf("\r") < 0) return `${out}data: ${data}\n\n`;
  for (const line of data.split(LINE_BREAK)) out += `data: ${line}\n`;
  return out + "\n";
}

function startId(lastEventId: string | undefined): number {
  if (lastEventId === undefined || !/^\d{1,15}$/.test(lastEventId)) return 0;
  return Number(lastEventId);
}

interface Waiter {
  resolve(): void;
  reject(reason: unknown): void;
}

/**
 * Hands queued events to the socket once per macrotask rather than once per event: every stream
 * that received events while the current task (and its microtasks) ran is flushed together by
 * one zero-delay timer. A broadcast to many streams then costs one write per stream, not one per
 * event. The timer is cleared when the last waiting stream ends, so nothing stays pending.
 */
// Set by the class's static block: reach a stream's private methods from the small objects
// below, which stand in for per-stream closures.
let wake: (stream: SseStream) => void;
let pull: (stream: SseStream) => Promise<void> | void;
let cancel: (stream: SseStream) => void;
let beat: (stream: SseStream) => void;

class FlushScheduler {
  #due = new Set<SseStream>();
  #timer: ReturnType<typeof setTimeout> | undefined;

  add(stream: SseStream): void {
    this.#due.add(stream);
    this.#timer ??= setTimeout(this.#run, 0);
  }

  delete(stream: SseStream): void {
    if (this.#due.delete(stream) && this.#due.size === 0 && this.#timer !== undefined) {
      clearTimeout(this.#timer);
      this.#timer = undefined;
    }
  }

  #run = (): void => {
    this.#timer = undefined;
    const due = this.#due;
    this.#due = new Set();
    for (const stream of due) wake(stream);
  };
}

const scheduler = new FlushScheduler();

/**
 * The body's underlying source and the heartbeat deadline's owner: one small object per stream
 * instead of a closure for each callback.
 */
class Source implements UnderlyingDefaultSource<Uint8Array> {
  constructor(readonly stream: SseStream) {}
  start(controller: ReadableStreamDefaultController<Uint8Array>): void {
    controllers.set(this.stream, controller);
  }
  pull(): Promise<void> | void {
    return pull(this.stream);
  }
  cancel(): void {
    cancel(this.stream);
  }
  onDeadline(): void {
    beat(this.stream);
  }
}

// Filled by `Source.start` while the stream's constructor runs.
const controllers = new WeakMap<SseStream, ReadableStreamDefaultController<Uint8Array>>();

/**
 * One client's event stream: give {@linkcode SseStream.readable} (or
 * {@linkcode SseStream.response}) to the HTTP server and call `send()`.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { SseStream } from "@fw/application/streams";
 *
 * const stream = new SseStream({ heartbeatMs: 0, lastEventId: "41" });
 * const res = stream.response();
 * await stream.send({ text: "hello" });
 * stream.close();
 * assert.equal(res.headers.get("content-type"), "text/event-stream; charset=utf-8");
 * assert.equal(await res.text(), 'id: 42\ndata: {"text":"hello"}\n\n');
 * ```
 */
export class SseStream {
  /** The response body. */
  readonly readable: ReadableStream<Uint8Array>;
  readonly #clock: Clock;
  readonly #heartbeatMs: number;
  readonly #highWaterMark: number;
  // An idle stream holds only what it needs: one deadline on the clock's shared timer, and the
  // abort controller, promises and arrays created when first used.
  #abort: AbortController | undefined;
  #reasonEnded: unknown;
  #done: Promise<void> | undefined;
  #resolveDone: (() => void) | undefined;
  #controller: ReadableStreamDefaultController<Uint8Array>;
  #queue: string[] = [];
  #queued = 0;
  #waiters: Waiter[] | undefined;
  #pullWaiter: (() => void) | undefined;
  #heartbeat: Deadline | undefined;
  #nextId: number;
  #lastId: string | undefined;
  #closing = false;
  #ended = false;

  /**
   * Creates a stream; heartbeats start at once.
   *
   * @param options Clock, heartbeat interval, queue bound, `Last-Event-ID` and retry delay.
   * @throws {RangeError} For a negative heartbeat interval or a high-water mark below 1.
   */
  constructor(options: SseStreamOptions = {}) {
    this.#clock = options.clock ?? systemClock;
    this.#heartbeatMs = options.heartbeatMs ?? DEFAULT_HEARTBEAT_MS;
    this.#highWaterMark = options.highWaterMark ?? DEFAULT_SSE_HIGH_WATER_MARK;
    if (!(this.#heartbeatMs >= 0)) {
      throw new RangeError(
        `Invalid SSE option "heartbeatMs": expected >= 0, got ${this.#heartbeatMs}`,
      );
    }
    if (!(this.#highWaterMark >= 1)) {
      throw new RangeError(
        `Invalid SSE option "highWaterMark": expected >= 1, got ${this.#highWaterMark}`,
      );
    }
    this.#nextId = startId(options.lastEventId);
    const source = new Source(this);
    this.readable = new ReadableStream<Uint8Array>(source, { highWaterMark: 0 });
    this.#controller = controllers.get(this)!;
    controllers.delete(this);
    if (options.retryMs !== undefined) this.#push(`retry: ${Math.floor(options.retryMs)}\n\n`);
    if (this.#heartbeatMs > 0) {
      this.#heartbeat = new Deadline(this.#clock, source);
      this.#heartbeat.set(this.#heartbeatMs);
    }
  }

  static {
    wake = (stream) => stream.#wakePull();
    pull = (stream) => stream.#pull(stream.#controller);
    cancel = (stream) => stream.#end(new DOMException("The client disconnected", "AbortError"));
    beat = (stream) => stream.#beat();
  }

  /** Aborted when the stream ends: the client left, or `close()` / `destroy()` was called. */
  get signal(): AbortSignal {
    if (this.#abort === undefined) {
      this.#abort = new AbortController();
      if (this.#ended) this.#abort.abort(this.#reasonEnded);
    }
    return this.#abort.signal;
  }

  /** Settles once the stream has ended and its timer is cleared. */
  get done(): Promise<void> {
    if (this.#done === undefined) {
      this.#done = this.#ended
        ? Promise.resolve()
        : new Promise((resolve) => this.#resolveDone = resolve);
    }
    return this.#done;
  }

  /** True once no more events can be sent. */
  get closed(): boolean {
    return this.#closing || this.#ended;
  }

  /** The id of the last event sent (or the `Last-Event-ID` the stream resumed from). */
  get lastId(): string | undefined {
    return this.#lastId ?? (this.#nextId > 0 ? String(this.#nextId) : undefined);
  }

  /**
   * A `200 text/event-stream` response streaming this body, uncached and unbuffered by proxies.
   *
   * @param headers Extra headers.
   * @returns The response.
   */
  response(headers?: HeadersInit): Response {
    const all = new Headers(headers);
    all.set("content-type", "text/event-stream; charset=utf-8");
    all.set("cache-control", "no-cache");
    all.set("x-accel-buffering", "no");
    return new Response(this.readable, { status: 200, headers: all });
  }

  /**
   * Sends a value as JSON data.
   *
   * @param value A JSON-serialisable value.
   * @param options Id and event name.
   * @returns Settles when the event fits in the queue (immediately unless the client lags).
   * @throws {DOMException} (rejection, `AbortError`) Once the stream has ended.
   */
  send(value: unknown, options?: SseSendOptions): Promise<void> {
    if (this.closed) return Promise.reject(this.#reason());
    return this.sendJson(JSON.stringify(value), options);
  }

  /**
   * Sends data that is already JSON text (or any text).
   *
   * @param data The data.
   * @param options Id and event name.
   * @returns Settles when the event fits in the queue.
   * @throws {DOMException} (rejection, `AbortError`) Once the stream has ended.
   * @throws {RangeError} (rejection) When far more than `highWaterMark` is queued because sends
   *   were not awaited.
   */
  sendJson(data: string, options?: SseSendOptions): Promise<void> {
    if (this.closed) return Promise.reject(this.#reason());
    if (this.#queued > this.#highWaterMark * HARD_LIMIT_FACTOR) {
      return Promise.reject(
        new RangeError(
          `SSE queue is full (${this.#queued} characters unsent): await each send() before the next`,
        ),
      );
    }
    if (options === undefined || (options.id === undefined && options.event === undefined)) {
      // The common case, kept cheap for fan-out: a numbered event with one data line.
      const id = String(++this.#nextId);
      const text = data.indexOf("\n") < 0 && data.indexOf("\r") < 0
        ? `id: ${id}\ndata: ${data}\n\n`
        : encodeSseEvent(data, { id });
      return this.#enqueue(id, text);
    }
    let text: string;
    try {
      text = encodeSseEvent(data, {
        id: options.id === undefined ? this.#nextId + 1 : options.id,
        event: options.event,
      });
    } catch (error) {
      return Promise.reject(error);
    }
    if (options.id === undefined) this.#nextId++;
    else if (typeof options.id === "number" && Number.isSafeInteger(options.id)) {
      this.#nextId = options.id;
    }
    return this.#enqueue(String(options.id ?? this.#nextId), text);
  }

  #enqueue(id: string, text: string): Promise<void> {
    this.#lastId = id;
    this.#push(text);
    if (this.#queued <= this.#highWaterMark) return Promise.resolve();
    return new Promise((resolve, reject) => (this.#waiters ??= []).push({ resolve, reject }));
  }

  /**
   * Writes a comment line (ignored by clients; keeps proxies from timing out).
   *
   * @param text Comment text (one line).
   */
  comment(text: string): void {
    if (!this.closed) this.#push(`: ${checkField(text, "comment")}\n\n`);
  }

  /** Ends the stream after the queued events are delivered. */
  close(): void {
    if (this.closed) return;
    this.#closing = true;
    this.#heartbeat?.clear();
    this.#wakePull();
  }

  /**
   * Ends the stream at once, dropping unsent events, and aborts the response (server shutdown).
   *
   * @param reason The abort reason (default an `AbortError`).
   */
  destroy(reason?: unknown): void {
    if (this.#ended) return;
    const why = reason ?? new DOMException("The stream was closed by the server", "AbortError");
    try {
      this.#controller.error(why);
    } catch {
      // already closed
    }
    this.#end(why);
  }

  #reason(): unknown {
    return this.#reasonEnded ??
      new DOMException("The stream was closed by the server", "AbortError");
  }

  #push(text: string): void {
    this.#queue.push(text);
    this.#queued += text.length;
    if (this.#pullWaiter !== undefined) scheduler.add(this);
  }

  #wakePull(): void {
    scheduler.delete(this);
    const wake = this.#pullWaiter;
    if (wake !== undefined) {
      // The pending pull settles once the woken pull has run (the closure exists only now).
      this.#pullWaiter = undefined;
      queueMicrotask(() => {
        const next = this.#pull(this.#controller);
        if (next === undefined) wake();
        else next.then(wake);
      });
    }
  }

  #pull(controller: ReadableStreamDefaultController<Uint8Array>): Promise<void> | void {
    if (this.#ended) return;
    if (this.#queue.length === 0) {
      if (this.#closing) {
        controller.close();
        this.#end(new DOMException("The stream was closed by the server", "AbortError"));
        return;
      }
      return new Promise<void>((resolve) => this.#pullWaiter = resolve);
    }
    const text = this.#queue.length === 1 ? this.#queue[0] : this.#queue.join("");
    this.#queue = [];
    this.#queued = 0;
    controller.enqueue(encoder.encode(text));
    const waiters = this.#waiters;
    if (waiters !== undefined) {
      this.#waiters = undefined;
      for (const w of waiters) w.resolve();
    }
  }

  #beat(): void {
    if (this.closed) return;
    if (this.#queue.length === 0) this.#push(HEARTBEAT);
    this.#heartbeat?.set(this.#heartbeatMs);
  }

  #end(reason: unknown): void {
    if (this.#ended) return;
    this.#ended = true;
    this.#reasonEnded = reason;
    this.#heartbeat?.clear();
    this.#queue = [];
    this.#queued = 0;
    const waiters = this.#waiters;
    this.#waiters = undefined;
    for (const w of waiters ?? []) w.reject(reason);
    this.#wakePull();
    this.#abort?.abort(reason);
    this.#resolveDone?.();
    this.#resolveDone = undefined;
  }
}
