/**
 * A small structured logger: levels, fields, child loggers and pluggable sinks. The events
 * module's `message handled` lines and the `WARN [response-validation]` lines go through it.
 *
 * The text sink prints `LEVEL [traceId] message {fields}`: the `traceId` field, when present,
 * becomes the bracketed prefix and the other fields follow as JSON.
 *
 * A record written inside a traced request or handler (a span in the async context, see
 * `currentSpan` in `tracer.ts`) gets the fields `trace_id` and `span_id`, so a log backend can
 * link the line to its trace; a span that keeps log lines (`Span.log`) gets the record too.
 *
 * @module
 */

import { currentSpan, isValidSpanContext } from "./tracer.ts";

/** Severity, lowest first; `silent` logs nothing. */
export type LogLevel = "debug" | "info" | "warn" | "error" | "silent";

/** One log entry. */
export interface LogRecord {
  /** Severity. */
  level: Exclude<LogLevel, "silent">;
  /** The message. */
  message: string;
  /** Structured fields (the logger's own merged with the call's). */
  fields: Record<string, unknown>;
  /** Milliseconds since the epoch, from the logger's clock. */
  time: number;
}

/** Where records go. */
export interface LogSink {
  /** Writes one record. */
  write(record: LogRecord): void;
}

/** The logging interface every part of fw receives. */
export interface Logger {
  /** The minimum level written. */
  readonly level: LogLevel;
  /** Logs at debug level. */
  debug(message: string, fields?: Record<string, unknown>): void;
  /** Logs at info level. */
  info(message: string, fields?: Record<string, unknown>): void;
  /** Logs at warn level. */
  warn(message: string, fields?: Record<string, unknown>): void;
  /** Logs at error level; an `error` field holding an Error prints its stack. */
  error(message: string, fields?: Record<string, unknown>): void;
  /** A logger that adds `fields` to every record. */
  child(fields: Record<string, unknown>): Logger;
  /** True when records of `level` are written. */
  enabled(level: Exclude<LogLevel, "silent">): boolean;
}

/** Options of {@linkcode createLogger}. */
export interface LoggerOptions {
  /** Minimum level; default the `LOG_LEVEL` environment variable, else `info`. */
  level?: LogLevel;
  /** Destination; default {@linkcode consoleSink}. */
  sink?: LogSink;
  /** Time source; default `Date.now`. */
  clock?: () => number;
  /** Fields added to every record. */
  fields?: Record<string, unknown>;
}

const RANK: Record<LogLevel, number> = { debug: 10, info: 20, warn: 30, error: 40, silent: 99 };

function envLevel(): LogLevel | undefined {
  let raw: string | undefined;
  try {
    raw = Deno.env.get("LOG_LEVEL");
  } catch {
    return undefined; // no env permission
  }
  if (raw === undefined || raw === "") return undefined;
  const v = raw.toLowerCase();
  if (!Object.hasOwn(RANK, v)) {
    throw new TypeError(
      `Invalid LOG_LEVEL environment variable "${raw}": use debug, info, warn, error or silent`,
    );
  }
  return v as LogLevel;
}

/**
 * Creates a logger.
 *
 * @param options Level, sink, clock and base fields.
 * @returns The logger.
 * @throws {TypeError} When `level` (or, without it, `LOG_LEVEL`) is not a known level.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { createLogger, MemorySink } from "@fw/runtime";
 * const sink = new MemorySink();
 * const log = createLogger({ level: "info", sink, clock: () => 0 }).child({ service: "orders" });
 * log.debug("not written");
 * log.info("order created", { id: 7 });
 * assert.deepEqual(sink.records, [
 *   { level: "info", message: "order created", fields: { service: "orders", id: 7 }, time: 0 },
 * ]);
 * ```
 */
export function createLogger(options: LoggerOptions = {}): Logger {
  const level = options.level ?? envLevel() ?? "info";
  if (!Object.hasOwn(RANK, level)) {
    throw new TypeError(
      `Invalid log level "${level}": use debug, info, warn, error or silent`,
    );
  }
  return new StructuredLogger(
    level,
    options.sink ?? consoleSink(),
    options.clock ?? Date.now,
    options.fields ?? {},
  );
}

class StructuredLogger implements Logger {
  readonly #rank: number;
  constructor(
    readonly level: LogLevel,
    readonly sink: LogSink,
    readonly clock: () => number,
    readonly fields: Record<string, unknown>,
  ) {
    this.#rank = RANK[level];
  }
  enabled(level: Exclude<LogLevel, "silent">): boolean {
    return RANK[level] >= this.#rank;
  }
  #write(level: Exclude<LogLevel, "silent">, message: string, fields?: Record<string, unknown>) {
    if (RANK[level] < this.#rank) return;
    const merged = fields ? { ...this.fields, ...fields } : { ...this.fields };
    const span = currentSpan();
    if (span !== undefined && isValidSpanContext(span.context) && !("trace_id" in merged)) {
      merged.trace_id = span.context.traceId;
      merged.span_id = span.context.spanId;
    }
    const record = { level, message, fields: merged, time: this.clock() };
    this.sink.write(record);
    span?.log?.(record);
  }
  debug(message: string, fields?: Record<string, unknown>): void {
    this.#write("debug", message, fields);
  }
  info(message: string, fields?: Record<string, unknown>): void {
    this.#write("info", message, fields);
  }
  warn(message: string, fields?: Record<string, unknown>): void {
    this.#write("warn", message, fields);
  }
  error(message: string, fields?: Record<string, unknown>): void {
    this.#write("error", message, fields);
  }
  child(fields: Record<string, unknown>): Logger {
    return new StructuredLogger(this.level, this.sink, this.clock, { ...this.fields, ...fields });
  }
}

function jsonable(fields: Record<string, unknown>, stacks: boolean): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(fields)) {
    out[k] = v instanceof Error
      ? (stacks
        ? { name: v.name, message: v.message, stack: v.stack }
        : { name: v.name, message: v.message })
      : v;
  }
  return out;
}

const RESERVED = new Set(["level", "time", "message"]);

/**
 * Formats a record as one JSON line: `{"level", "time" (ISO 8601), "message", ...fields}`. Fields
 * named `level`, `time` or `message` are written as `field.level` and so on; an Error field
 * becomes `{name, message, stack}`.
 *
 * @param record The record.
 * @returns The JSON text (without newline).
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { formatLogJson } from "@fw/runtime";
 * assert.equal(
 *   formatLogJson({ level: "info", message: "order created", fields: { traceId: "abc", id: 7 }, time: 0 }),
 *   '{"level":"info","time":"1970-01-01T00:00:00.000Z","message":"order created","traceId":"abc","id":7}',
 * );
 * ```
 */
export function formatLogJson(record: LogRecord): string {
  const out: Record<string, unknown> = {
    level: record.level,
    time: new Date(record.time).toISOString(),
    message: record.message,
  };
  for (const [k, v] of Object.entries(jsonable(record.fields, true))) {
    out[RESERVED.has(k) ? `field.${k}` : k] = v;
  }
  return safeJson(out);
}

function safeJson(value: unknown): string {
  try {
    return JSON.stringify(value, (_k, v) => typeof v === "bigint" ? v.toString() : v);
  } catch {
    return '"[unserialisable]"';
  }
}

/**
 * Formats a record as one text line: `LEVEL [traceId] message {fields}`.
 *
 * @param record The record.
 * @returns The line (without newline); an Error in `error` adds its stack on following lines.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { formatLogLine } from "@fw/runtime";
 * assert.equal(
 *   formatLogLine({ level: "warn", message: "[response-validation] /users/1 — body.name must be a string", fields: {}, time: 0 }),
 *   "WARN [response-validation] /users/1 — body.name must be a string",
 * );
 * assert.equal(
 *   formatLogLine({ level: "info", message: "message handled", fields: { traceId: "abc", event: { attempt: 1 } }, time: 0 }),
 *   'INFO [abc] message handled {"event":{"attempt":1}}',
 * );
 * ```
 */
export function formatLogLine(record: LogRecord): string {
  const { traceId, ...rest } = record.fields;
  let line = record.level.toUpperCase();
  if (traceId) line += ` [${traceId}]`;
  line += ` ${record.message}`;
  if (Object.keys(rest).length) line += ` ${safeJson(jsonable(rest, false))}`;
  const err = record.fields.error;
  if (err instanceof Error && err.stack) line += `\n${err.stack}`;
  return line;
}

/** Options of {@linkcode consoleSink}. */
export interface ConsoleSinkOptions {
  /** `text` (default): one readable line. `json`: one JSON object per line. */
  format?: "text" | "json";
}

/**
 * Writes records to the console, one line each: debug/info through `console.log` (stdout),
 * warn/error through `console.error` (stderr). `text` lines come from {@linkcode formatLogLine},
 * `json` lines from {@linkcode formatLogJson}.
 *
 * @param options The output format.
 * @returns The sink.
 * @throws {TypeError} When `format` is neither `text` nor `json`.
 *
 * @example
 * ```ts
 * import { consoleSink, createLogger } from "@fw/runtime";
 * const log = createLogger({ sink: consoleSink({ format: "json" }), level: "warn" });
 * log.info("not written: below the level");
 * ```
 */
export function consoleSink(options: ConsoleSinkOptions = {}): LogSink {
  const format = options.format ?? "text";
  if (format !== "text" && format !== "json") {
    throw new TypeError(`Invalid log format "${format}": use text or json`);
  }
  const render = format === "json" ? formatLogJson : formatLogLine;
  return {
    write(record) {
      const line = render(record);
      if (record.level === "warn" || record.level === "error") console.error(line);
      else console.log(line);
    },
  };
}

/**
 * Keeps records in memory, for tests.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { createLogger, MemorySink } from "@fw/runtime";
 * const sink = new MemorySink();
 * createLogger({ sink }).warn("careful");
 * assert.deepEqual(sink.lines(), ["WARN careful"]);
 * ```
 */
export class MemorySink implements LogSink {
  /** Every record written, oldest first. */
  readonly records: LogRecord[] = [];

  /** Stores the record. */
  write(record: LogRecord): void {
    this.records.push(record);
  }

  /** The records formatted as text lines. */
  lines(): string[] {
    return this.records.map(formatLogLine);
  }
}
