/**
 * JSON message channels over WebSocket: validated, bounded and timed.
 *
 * {@linkcode WebSocketChannel} wraps one server-side `WebSocket`. Incoming text frames are parsed
 * as JSON and validated; `messages()` yields them in order and ends when the peer closes.
 * `send()` validates (when given a validator), serialises and waits while the socket's
 * `bufferedAmount` is above the high-water mark, so a peer that stops reading stops the sender.
 *
 * An empty text frame (which is not JSON, so it cannot be a message) ends the peer's stream
 * without closing the connection: `messages()` ends, and the server can still answer (a client
 * stream's result, the rest of a bidirectional stream). Closing the socket ends it too.
 *
 * Every way a peer can misbehave closes the connection after an error message
 * `{"error": <envelope>}` (the HTTP error envelope):
 *
 * | what happened | close code |
 * | --- | --- |
 * | handler finished | 1000 |
 * | idle for `idleTimeoutMs`, or the server is stopping | 1001 |
 * | binary frame where JSON is expected | 1003 (unsupported data) |
 * | invalid JSON, or a message that fails its schema | 1007 |
 * | more than `maxQueuedMessages` unread messages | 1008 |
 * | message larger than `maxMessageBytes` | 1009 |
 * | the handler threw | 1011 |
 *
 * @module
 */

import {
  type Clock,
  type ErrorBody,
  joinMessages,
  systemClock,
  type ValidationErrorBody,
  type ValidationIssue,
  type Validator,
} from "@fw/runtime";
import { Deadline, small } from "./_timers.ts";

/** WebSocket close codes used by fw (RFC 6455 section 7.4.1). */
export const CloseCode = {
  /** The handler finished. */
  Normal: 1000,
  /** Idle timeout, or the server is stopping. */
  GoingAway: 1001,
  /** A binary frame where JSON text is expected. */
  UnsupportedData: 1003,
  /** Invalid JSON, or a message that fails its schema. */
  InvalidPayload: 1007,
  /** Too many unread messages. */
  PolicyViolation: 1008,
  /** A message above the size limit. */
  MessageTooBig: 1009,
  /** The handler threw. */
  InternalError: 1011,
} as const;

/** Default largest incoming message (1 MiB). */
export const DEFAULT_MAX_MESSAGE_BYTES: number = 1024 * 1024;
/** Default number of received messages that may wait unread. */
export const DEFAULT_MAX_QUEUED_MESSAGES = 256;
/** Default idle timeout (5 minutes without a message either way). */
export const DEFAULT_IDLE_TIMEOUT_MS: number = 5 * 60_000;
/** Default `bufferedAmount` above which `send()` waits (1 MiB). */
export const DEFAULT_WS_HIGH_WATER_MARK: number = 1024 * 1024;

/** The error envelope sent before an error close. */
export type ErrorEnvelope = ErrorBody | ValidationErrorBody;

/** How the channel ended. */
export interface CloseInfo {
  /** Close code. */
  readonly code: number;
  /** Close reason. */
  readonly reason: string;
  /** True when the server closed first. */
  readonly byServer: boolean;
}

/** Options of {@linkcode WebSocketChannel}. */
export interface WebSocketChannelOptions<In = unknown, Out = unknown> {
  /** Validates each incoming message (default: any JSON value). */
  inbound?: Validator<In>;
  /** Validates each outgoing message; its output is what is sent (default: as given). */
  outbound?: Validator<Out>;
  /** Name used in error messages, for example `GET /chat`. */
  label?: string;
  /** Largest incoming message in bytes (UTF-8); default 1 MiB. Larger closes with 1009. */
  maxMessageBytes?: number;
  /** Messages that may wait unread; one more closes with 1008. Default 256. */
  maxQueuedMessages?: number;
  /** Closes with 1001 after this long without a message either way; 0 disables. Default 5 min. */
  idleTimeoutMs?: number;
  /** `bufferedAmount` above which `send()` waits; default 1 MiB. */
  highWaterMark?: number;
  /** How often a waiting `send()` checks `bufferedAmount`, in ms (default 5). */
  drainPollMs?: number;
  /** Clock for the idle timeout (default: the system clock). */
  clock?: Clock;
}

/** The rejection of a send on a closed channel (its `name` is `AbortError`). */
export class WebSocketClosedError extends Error {
  /** How the channel closed. */
  readonly info: CloseInfo;

  /**
   * Creates the error.
   *
   * @param info How the channel closed.
   */
  constructor(info: CloseInfo) {
    super(`The WebSocket is closed: code ${info.code}${info.reason ? ` (${info.reason})` : ""}`);
    this.name = "AbortError";
    this.info = info;
  }
}

function utf8Length(text: string, limit: number): number {
  if (text.length * 3 <= limit) return text.length;
  let bytes = 0;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c < 0x80) bytes += 1;
    else if (c < 0x800) bytes += 2;
    else if (c >= 0xd800 && c <= 0xdbff) {
      bytes += 4;
      i++;
    } else bytes += 3;
    if (bytes > limit) return bytes;
  }
  return bytes;
}

function invalid(errors: ValidationIssue[]): ValidationErrorBody {
  return { message: joinMessages(errors), errors };
}

function shortReason(text: string): string {
  // A close reason is limited to 123 bytes of UTF-8.
  const ascii = text.replace(/[^\x20-\x7e]/g, "?");
  return ascii.length <= 123 ? ascii : ascii.slice(0, 120) + "...";
}

const RESOLVED = Promise.resolve();
const NO_INFO: CloseInfo = Object.freeze({ code: 1006, reason: "", byServer: false });

/** Bits of `WebSocketChannel.#flags`. */
const ITERATING = 1;
const DISCARD = 2;
const INPUT_ENDED = 4;
/** The connection is closed (`#end` is final). */
const CLOSED = 8;

/** Resolved options: one object shared by every channel built from the same options object. */
interface Settings {
  readonly inbound: Validator<unknown> | undefined;
  readonly outbound: Validator<unknown> | undefined;
  readonly label: string;
  readonly maxBytes: number;
  readonly maxQueued: number;
  readonly idleMs: number;
  readonly highWaterMark: number;
  readonly pollMs: number;
  readonly clock: Clock;
  /** Clock time the settings were made: activity times count from here (small integers). */
  readonly epoch: number;
}

const settingsByOptions = new WeakMap<object, Settings>();

function resolveSettings(options: WebSocketChannelOptions<unknown, unknown>): Settings {
  const clock = options.clock ?? systemClock;
  return {
    inbound: options.inbound,
    outbound: options.outbound,
    label: options.label ?? "WebSocket",
    maxBytes: options.maxMessageBytes ?? DEFAULT_MAX_MESSAGE_BYTES,
    maxQueued: options.maxQueuedMessages ?? DEFAULT_MAX_QUEUED_MESSAGES,
    idleMs: options.idleTimeoutMs ?? DEFAULT_IDLE_TIMEOUT_MS,
    highWaterMark: options.highWaterMark ?? DEFAULT_WS_HIGH_WATER_MARK,
    pollMs: options.drainPollMs ?? 5,
    clock,
    epoch: clock.now(),
  };
}

const DEFAULT_SETTINGS: Settings = resolveSettings({});

/** The settings of an options object (read once per object: stream endpoints pass the same one). */
function settingsOf(options: WebSocketChannelOptions<unknown, unknown> | undefined): Settings {
  if (options === undefined) return DEFAULT_SETTINGS;
  let settings = settingsByOptions.get(options);
  if (settings === undefined) settingsByOptions.set(options, settings = resolveSettings(options));
  return settings;
}

/** A promise and its resolver, created when first needed. */
interface Deferred<T> {
  readonly promise: Promise<T>;
  resolve(value: T): void;
}

function deferred<T>(): Deferred<T> {
  let resolve!: (value: T) => void;
  const promise = new Promise<T>((r) => resolve = r);
  return { promise, resolve };
}

/** What a channel holds only once used: most idle connections never need it. */
interface Extra<In> {
  /** `closed` once asked for: its deferred while open, then a settled promise. */
  closed: Deferred<CloseInfo> | Promise<CloseInfo> | undefined;
  /** Settles when a connecting socket opens. */
  open: Deferred<void> | undefined;
  /** Messages received before they were read. */
  queue: In[] | undefined;
  /** Waiting `send()` calls. */
  drain: Drain | undefined;
}

/** Waiting `send()` calls and the timer that polls `bufferedAmount` for them. */
interface Drain {
  timer: ReturnType<typeof setTimeout> | undefined;
  readonly waiters: { resolve(): void; reject(reason: unknown): void }[];
}

// Set by the class's static block: routes socket events and the idle deadline to a channel's
// private methods.
let dispatch: (channel: WebSocketChannel<unknown, unknown>, event: Event | undefined) => void;

/**
 * The socket's event listener and the idle deadline on the clock's shared timer: one small
 * object per connection, no closures.
 */
class Listener extends Deadline {
  constructor(readonly channel: WebSocketChannel<unknown, unknown>, clock: Clock) {
    super(clock);
  }
  handleEvent(event: Event): void {
    dispatch(this.channel, event);
  }
  onDeadline(): void {
    dispatch(this.channel, undefined);
  }
}

/**
 * A JSON message channel over one server-side WebSocket.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { compile, Int } from "@fw/runtime";
 * import { CloseCode, WebSocketChannel } from "@fw/application/streams";
 *
 * const server = Deno.serve({ port: 0, hostname: "127.0.0.1", onListen() {} }, (req) => {
 *   const { socket, response } = Deno.upgradeWebSocket(req);
 *   const channel = new WebSocketChannel(socket, { inbound: compile({ n: Int }, "message") });
 *   (async () => {
 *     for await (const m of channel.messages()) await channel.send({ double: m.n * 2 });
 *   })();
 *   return response;
 * });
 * const ws = new WebSocket(`ws://127.0.0.1:${server.addr.port}`);
 * await new Promise((r) => ws.onopen = r);
 * ws.send(JSON.stringify({ n: 21 }));
 * const reply = await new Promise<MessageEvent>((r) => ws.onmessage = r);
 * assert.deepEqual(JSON.parse(reply.data), { double: 42 });
 * ws.send(JSON.stringify({ n: "x" }));
 * const closed = await new Promise<CloseEvent>((r) => ws.onclose = r);
 * assert.equal(closed.code, CloseCode.InvalidPayload);
 * await server.shutdown();
 * ```
 */
export class WebSocketChannel<In = unknown, Out = unknown> {
  static {
    dispatch = (channel, event) => {
      if (event === undefined) channel.#checkIdle();
      else if (event.type === "message") channel.#receive((event as MessageEvent).data);
      else if (event.type === "close") {
        const { code, reason } = event as CloseEvent;
        channel.#ended(code, reason);
      } else if (event.type === "open") channel.#opened();
    };
  }

  // An idle connection holds only what it needs: the socket, the settings shared with every
  // channel of the same options, one listener that is also the idle deadline on the clock's
  // shared timer (no closures), and the promises, arrays and abort controller created when
  // first used.
  readonly #socket: WebSocket;
  readonly #o: Settings;
  readonly #listener: Listener;
  #flags = 0;
  /** Messages received (for the connection's span). */
  #received = 0;
  /** Last message either way, in ms since `#o.epoch`. */
  #lastActivity: number;
  #abort: AbortController | undefined = undefined;
  #reader: ((result: IteratorResult<In>) => void) | undefined = undefined;
  /** How the connection ends: set when closing starts (by the server) or when it closed. */
  #end: CloseInfo | undefined = undefined;
  #x: Extra<In> | undefined = undefined;

  /**
   * Wraps a server-side socket (from `Deno.upgradeWebSocket`) and takes over its event handlers.
   *
   * @param socket The socket, connecting or open.
   * @param options Validators, limits, idle timeout and back-pressure settings (read once per
   *   options object, so channels built from the same object share them).
   */
  constructor(socket: WebSocket, options?: WebSocketChannelOptions<In, Out>) {
    this.#socket = socket;
    const o = settingsOf(options as WebSocketChannelOptions<unknown, unknown> | undefined);
    this.#o = o;
    this.#lastActivity = small(o.clock.now() - o.epoch);
    socket.binaryType = "arraybuffer";
    // One listener object for every event type (no closure per type). An error is always
    // followed by a close event, which is what ends the channel.
    this.#listener = new Listener(this as WebSocketChannel<unknown, unknown>, o.clock);
    socket.addEventListener("message", this.#listener);
    socket.addEventListener("close", this.#listener);
    if (o.idleMs > 0) this.#listener.set(o.idleMs);
  }

  #extra(): Extra<In> {
    return this.#x ??= { closed: undefined, open: undefined, queue: undefined, drain: undefined };
  }

  /** True once the connection is closed. */
  #isClosed(): boolean {
    return (this.#flags & CLOSED) !== 0;
  }

  /** Aborted when the connection ends, whoever closed it. */
  get signal(): AbortSignal {
    if (this.#abort === undefined) {
      this.#abort = new AbortController();
      if (this.#isClosed()) this.#abort.abort(new WebSocketClosedError(this.#end!));
    }
    return this.#abort.signal;
  }

  /** How many messages arrived (valid or not). */
  get received(): number {
    return this.#received;
  }

  /** Settles with the close code and reason once the connection is closed. */
  get closed(): Promise<CloseInfo> {
    const x = this.#extra();
    const closed = x.closed;
    if (closed instanceof Promise) return closed;
    if (closed !== undefined) return closed.promise;
    if (this.#isClosed()) return x.closed = Promise.resolve(this.#end!);
    const d = deferred<CloseInfo>();
    x.closed = d;
    return d.promise;
  }

  /** Settles once the socket is open (at once when it is not connecting). */
  #whenOpen(): Promise<void> | undefined {
    if (this.#isClosed() || this.#socket.readyState !== WebSocket.CONNECTING) {
      return undefined;
    }
    const x = this.#extra();
    if (x.open === undefined) {
      x.open = deferred<void>();
      this.#socket.addEventListener("open", this.#listener, { once: true });
    }
    return x.open.promise;
  }

  #opened(): void {
    const x = this.#x;
    if (x === undefined || x.open === undefined) return;
    const open = x.open;
    x.open = undefined;
    open.resolve();
  }

  /**
   * Incoming messages, validated, in order; ends when the peer closes (or the channel closes).
   * One consumer at a time.
   *
   * @returns The iterator.
   * @throws {TypeError} When another iteration is already running.
   */
  messages(): AsyncIterableIterator<In> {
    if (this.#flags & ITERATING) {
      throw new TypeError(`${this.#o.label}: messages() is already being iterated`);
    }
    this.#flags |= ITERATING;
    const iterator: AsyncIterableIterator<In> = {
      next: () => this.#next(),
      return: () => {
        this.#flags &= ~ITERATING;
        return Promise.resolve({ done: true, value: undefined });
      },
      [Symbol.asyncIterator]: () => iterator,
    };
    return iterator;
  }

  /** True once the peer sent the end-of-stream frame or the connection closed. */
  get inputEnded(): boolean {
    return (this.#flags & INPUT_ENDED) !== 0 || this.#end !== undefined;
  }

  /** From now on incoming messages are checked for size and type, then dropped. */
  discardIncoming(): void {
    this.#flags |= DISCARD;
    if (this.#x !== undefined) this.#x.queue = undefined;
  }

  /**
   * Sends one message as JSON, after validating it when an outbound validator is set.
   *
   * @param message The message.
   * @returns Settles once the message is handed to the socket and `bufferedAmount` is below the
   *   high-water mark.
   * @throws {TypeError} (rejection) When the message fails the outbound schema.
   * @throws {WebSocketClosedError} (rejection) Once the connection is closed or closing.
   */
  send(message: Out): Promise<void> {
    let value: unknown = message;
    const outbound = this.#o.outbound;
    if (outbound !== undefined) {
      const r = outbound(message);
      if (!r.ok) {
        return Promise.reject(
          new TypeError(`Invalid message sent by ${this.#o.label}: ${joinMessages(r.errors)}`),
        );
      }
      value = r.value;
    }
    return this.sendText(JSON.stringify(value));
  }

  /**
   * Sends text as it is (already-serialised JSON).
   *
   * @param text The frame's text.
   * @returns Settles once the socket takes the frame and is below the high-water mark.
   * @throws {WebSocketClosedError} (rejection) Once the connection is closed or closing.
   */
  sendText(text: string): Promise<void> {
    const open = this.#whenOpen();
    if (open !== undefined) return open.then(() => this.sendText(text));
    if (this.#end !== undefined || this.#socket.readyState !== WebSocket.OPEN) {
      return Promise.reject(this.#closedError());
    }
    this.#socket.send(text);
    this.#lastActivity = small(this.#o.clock.now() - this.#o.epoch);
    if (this.#socket.bufferedAmount <= this.#o.highWaterMark) return RESOLVED;
    return new Promise((resolve, reject) => {
      (this.#extra().drain ??= { timer: undefined, waiters: [] }).waiters.push({ resolve, reject });
      this.#pollDrain();
    });
  }

  /**
   * Closes the connection.
   *
   * @param code Close code (default 1000).
   * @param reason Close reason (trimmed to 123 bytes).
   */
  close(code: number = CloseCode.Normal, reason = ""): void {
    this.#shut(code, reason, undefined);
  }

  /**
   * Sends `{"error": envelope}` and closes with `code`.
   *
   * @param code Close code.
   * @param envelope The error envelope (`{statusCode, message, error}` or `{message, errors}`).
   */
  fail(code: number, envelope: ErrorEnvelope): void {
    this.#shut(code, envelope.message, JSON.stringify({ error: envelope }));
  }

  #shut(code: number, reason: string, frame: string | undefined): void {
    if (this.#end !== undefined) return;
    const closing: CloseInfo = { code, reason: shortReason(reason), byServer: true };
    this.#end = closing;
    if (this.#x !== undefined) this.#x.queue = undefined;
    this.#stopTimers();
    this.#rejectDrains();
    this.#finishReader();
    const act = () => {
      if (this.#isClosed()) return;
      try {
        if (frame !== undefined && this.#socket.readyState === WebSocket.OPEN) {
          this.#socket.send(frame);
        }
        this.#socket.close(code, closing.reason);
      } catch {
        this.#ended(code, closing.reason);
      }
    };
    const open = this.#whenOpen();
    if (open !== undefined) open.then(act);
    else act();
  }

  #closedError(): WebSocketClosedError {
    return new WebSocketClosedError(this.#end ?? NO_INFO);
  }

  #receive(data: unknown): void {
    if (this.#end !== undefined) return;
    this.#received++;
    const o = this.#o;
    this.#lastActivity = small(o.clock.now() - o.epoch);
    if (typeof data !== "string") {
      return this.fail(CloseCode.UnsupportedData, {
        statusCode: 400,
        message: "Binary messages are not supported: send JSON text",
        error: "Bad Request",
      });
    }
    if (utf8Length(data, o.maxBytes) > o.maxBytes) {
      return this.fail(CloseCode.MessageTooBig, {
        statusCode: 413,
        message: `Message is larger than ${o.maxBytes} bytes`,
        error: "Payload Too Large",
      });
    }
    if (this.#flags & DISCARD) return;
    if (data === "") {
      this.#flags |= INPUT_ENDED;
      this.#finishReader();
      return;
    }
    if (this.#flags & INPUT_ENDED) {
      return this.fail(CloseCode.PolicyViolation, {
        statusCode: 400,
        message: "Message received after the end of the stream (an empty frame)",
        error: "Bad Request",
      });
    }
    let value: unknown;
    try {
      value = JSON.parse(data);
    } catch {
      return this.fail(
        CloseCode.InvalidPayload,
        invalid([{ field: "message", message: "message must be valid JSON" }]),
      );
    }
    if (o.inbound !== undefined) {
      const r = o.inbound(value);
      if (!r.ok) return this.fail(CloseCode.InvalidPayload, invalid(r.errors));
      value = r.value;
    }
    const reader = this.#reader;
    if (reader !== undefined) {
      this.#reader = undefined;
      reader({ done: false, value: value as In });
      return;
    }
    const queue = this.#extra().queue ??= [];
    if (queue.length >= o.maxQueued) {
      return this.fail(CloseCode.PolicyViolation, {
        statusCode: 429,
        message: `Too many unread messages: more than ${o.maxQueued} waiting`,
        error: "Too Many Requests",
      });
    }
    queue.push(value as In);
  }

  #next(): Promise<IteratorResult<In>> {
    const queue = this.#x?.queue;
    if (queue !== undefined && queue.length > 0) {
      return Promise.resolve({ done: false, value: queue.shift()! });
    }
    if (
      (this.#flags & INPUT_ENDED) !== 0 || this.#end !== undefined ||
      (this.#flags & ITERATING) === 0
    ) {
      return Promise.resolve({ done: true, value: undefined });
    }
    if (this.#reader !== undefined) {
      return Promise.reject(
        new TypeError(`${this.#o.label}: next() called before the last settled`),
      );
    }
    return new Promise((resolve) => this.#reader = resolve);
  }

  #finishReader(): void {
    const reader = this.#reader;
    if (reader !== undefined) {
      this.#reader = undefined;
      reader({ done: true, value: undefined });
    }
  }

  /** The idle check, run by the clock's shared timer. */
  #checkIdle(): void {
    if (this.#end !== undefined) return;
    const o = this.#o;
    const idle = o.clock.now() - o.epoch - this.#lastActivity;
    if (idle >= o.idleMs) {
      this.fail(CloseCode.GoingAway, {
        statusCode: 408,
        message: `Idle timeout: no message for ${o.idleMs} ms`,
        error: "Request Timeout",
      });
    } else {
      this.#listener.set(o.idleMs - idle);
    }
  }

  #pollDrain(): void {
    const drain = this.#x?.drain;
    if (drain === undefined || drain.timer !== undefined) return;
    drain.timer = setTimeout(() => {
      drain.timer = undefined;
      const x = this.#x!;
      if (x.drain !== drain) return;
      if (this.#socket.bufferedAmount <= this.#o.highWaterMark) {
        x.drain = undefined;
        for (const w of drain.waiters) w.resolve();
      } else if (drain.waiters.length > 0) {
        this.#pollDrain();
      }
    }, this.#o.pollMs);
  }

  #rejectDrains(): void {
    const x = this.#x;
    const drain = x?.drain;
    if (drain === undefined) return;
    x!.drain = undefined;
    if (drain.timer !== undefined) clearTimeout(drain.timer);
    drain.timer = undefined;
    if (drain.waiters.length === 0) return;
    const error = this.#closedError();
    for (const w of drain.waiters) w.reject(error);
  }

  #stopTimers(): void {
    this.#listener.clear();
    const drain = this.#x?.drain;
    if (drain !== undefined && drain.timer !== undefined) {
      clearTimeout(drain.timer);
      drain.timer = undefined;
    }
  }

  #ended(code: number, reason: string): void {
    if (this.#isClosed()) return;
    const info = this.#end ?? { code, reason, byServer: false };
    this.#end = info;
    this.#flags |= CLOSED;
    this.#opened();
    this.#stopTimers();
    this.#rejectDrains();
    this.#finishReader();
    this.#abort?.abort(new WebSocketClosedError(info));
    const x = this.#x;
    const closed = x?.closed;
    if (closed !== undefined && !(closed instanceof Promise)) {
      x!.closed = closed.promise;
      closed.resolve(info);
    }
  }
}
