/**
 * The one module of `@fw/events` that imports the npm `postgres` client (porsager's postgres.js
 * v3). The SQL transport and the SQL realtime broker talk to PostgreSQL through the small
 * structural {@linkcode SqlClient} interface below, so a user may pass any compatible client (a
 * postgres.js `sql` instance satisfies it as is), and this file is the only place that knows how to
 * create one from a URL and how to explain a failed first connection without leaking a password.
 *
 * @module
 */

import { checkConnectionSource } from "./_connection_source.ts";

/** A row as the client returns it. */
export type SqlRow = Record<string, unknown>;

/**
 * Anything fw can run a query on: a postgres.js `sql` instance, or the `tx` handle inside
 * `sql.begin(async (tx) => ...)`. Queries use `$1`-style parameters; fw never interpolates a
 * value into SQL text, and quotes every identifier it builds itself.
 */
export interface SqlQueryable {
  /** Runs one query with positional parameters and resolves to its rows. */
  unsafe(
    query: string,
    parameters?: unknown[],
    options?: { prepare?: boolean },
  ): PromiseLike<readonly SqlRow[]>;
}

/** A live `LISTEN`, as returned by {@linkcode SqlClient.listen}. */
export interface SqlListenHandle {
  /** Stops listening on the channel. */
  unlisten(): Promise<void>;
}

/**
 * What fw needs from a PostgreSQL client. A postgres.js v3 `sql` instance has every member:
 * `listen` keeps one dedicated connection for all channels, `LISTEN`s again after that connection
 * drops and calls `onListen` after each (re)`LISTEN`, which is where fw catches up.
 */
export interface SqlClient extends SqlQueryable {
  /** Listens on a channel (unquoted name; the client quotes it). */
  listen(
    channel: string,
    onNotify: (payload: string) => void,
    onListen?: () => void,
  ): PromiseLike<SqlListenHandle>;
  /** Closes the connections (waits for running queries up to `timeout` seconds). */
  end(options?: { timeout?: number }): PromiseLike<void>;
}

/** Where an SQL transport or broker gets its connection: a URL, or a client of yours. */
export interface SqlSource {
  /** A `postgres://` URL: fw creates the client (a small pool) and closes it on `close()`. */
  readonly url?: string;
  /** A client of yours (a postgres.js `sql` instance); fw never closes it. */
  readonly client?: SqlClient;
}

/** An opened source. */
export interface SqlConnection {
  /** The client. */
  readonly sql: SqlClient;
  /** Where it connects, for messages: `host "h:5432", database "d"` (never the password). */
  readonly where: string;
  /** Closes the client when fw created it. */
  close(): Promise<void>;
}

/** Options fw applies to a client it creates from a URL. */
export interface SqlConnectOptions {
  /** Pool size (default 10). */
  readonly max?: number;
  /** `application_name` of every connection (lets operators and tests find them). */
  readonly applicationName?: string;
}

function describe(url: string): string {
  try {
    const u = new URL(url);
    const host = u.host || "localhost";
    const db = decodeURIComponent(u.pathname.replace(/^\//, "")) || u.username || "(default)";
    return `host "${host}", database "${db}"`;
  } catch {
    return "an unparsable URL";
  }
}

/** Removes the password of `url` from a message, wherever it appears. */
function redact(message: string, url: string | undefined): string {
  if (!url) return message;
  try {
    const pw = decodeURIComponent(new URL(url).password);
    return pw ? message.split(pw).join("***") : message;
  } catch {
    return message;
  }
}

/**
 * Checks a {@linkcode SqlSource}: exactly one of `url` and `client`, a `postgres:` or
 * `postgresql:` URL, a client with the needed methods.
 *
 * @param owner Name for messages, such as `sqlTransport()`.
 * @param source The source.
 * @throws {TypeError} Naming the option that is wrong.
 */
export function checkSqlSource(owner: string, source: SqlSource): void {
  checkConnectionSource(owner, source, {
    schemes: ["postgres:", "postgresql:"],
    expected: "a postgres:// URL",
    describeUrl: describe,
    product: "PostgreSQL",
    methods: ["unsafe", "listen", "end"],
  });
}

/** Error codes of a PostgreSQL connection that went away (server-side and postgres.js). */
const CONNECTION_LOST = new Set([
  "57P01", // admin_shutdown (pg_terminate_backend)
  "57P02", // crash_shutdown
  "57P03", // cannot_connect_now
  "CONNECTION_CLOSED",
  "CONNECTION_DESTROYED",
  "CONNECTION_ENDED",
  "ECONNRESET",
  "EPIPE",
]);

let guarded = false;

/**
 * Keeps a lost connection from crashing the process through postgres.js itself. When a
 * connection it has just opened is terminated while it fetches the array types (its
 * `fetch_types` step, run again on every reconnect), postgres.js 3.4 leaves that promise
 * without a handler, and Deno ends the process on an unhandled rejection. fw's own queries all
 * handle their errors, so an unhandled rejection that is a lost PostgreSQL connection comes from
 * there: it is reported as a warning and the client reconnects as usual. Any other unhandled
 * rejection is left alone.
 */
function guardDriverRejections(): void {
  if (guarded || typeof globalThis.addEventListener !== "function") return;
  guarded = true;
  globalThis.addEventListener("unhandledrejection", (event) => {
    const reason = event.reason as { code?: unknown; message?: unknown } | null | undefined;
    if (typeof reason?.code !== "string" || !CONNECTION_LOST.has(reason.code)) return;
    event.preventDefault();
    console.warn(
      `postgres: a connection was lost during the driver's own set-up query (${reason.code}: ${
        String(reason.message)
      }); it reconnects on the next query`,
    );
  });
}

/**
 * Opens a source and checks the connection with one query. With `url`, creates a postgres.js
 * client that reconnects on its own after a connection drops.
 *
 * @param owner Name for messages.
 * @param source The URL or the client.
 * @param options Pool size and application name (URL only).
 * @returns The connection.
 * @throws {Error} `<owner> cannot connect to PostgreSQL at host "h", database "d": ...` when the
 *   first query fails (the password never appears).
 */
export async function openSql(
  owner: string,
  source: SqlSource,
  options: SqlConnectOptions = {},
): Promise<SqlConnection> {
  checkSqlSource(owner, source);
  let sql: SqlClient;
  let owned = false;
  const where = source.url !== undefined ? describe(source.url) : "the given client";
  if (source.url !== undefined) {
    const { default: postgres } = await import("postgres");
    guardDriverRejections();
    sql = postgres(source.url, {
      max: options.max ?? 10,
      onnotice: () => {},
      connect_timeout: 10,
      ...(options.applicationName
        ? { connection: { application_name: options.applicationName } }
        : {}),
    }) as unknown as SqlClient;
    owned = true;
  } else {
    sql = source.client!;
  }
  try {
    await sql.unsafe("SELECT 1");
  } catch (error) {
    if (owned) await Promise.resolve(sql.end({ timeout: 0 })).catch(() => {});
    const detail = redact(String((error as Error)?.message ?? error), source.url);
    throw new Error(`${owner} cannot connect to PostgreSQL at ${where}: ${detail}`, {
      cause: error,
    });
  }
  let closed = false;
  return {
    sql,
    where,
    async close(): Promise<void> {
      if (closed || !owned) return;
      closed = true;
      await Promise.resolve(sql.end({ timeout: 1 })).catch(() => {});
    },
  };
}

/**
 * Checks an SQL identifier fw builds names from (a schema, a channel prefix): letters, digits and
 * `_`, starting with a letter or `_`, at most `max` bytes.
 *
 * @param owner Name for messages.
 * @param option The option name.
 * @param value The value.
 * @param max Longest allowed (PostgreSQL truncates names past 63 bytes).
 * @returns The value.
 * @throws {TypeError} Naming the option.
 */
export function sqlIdentifier(owner: string, option: string, value: unknown, max = 48): string {
  if (typeof value !== "string" || !/^[A-Za-z_][A-Za-z0-9_]*$/.test(value) || value.length > max) {
    throw new TypeError(
      `Invalid ${owner} option "${option}" ${
        JSON.stringify(String(value))
      }: expected letters, digits and "_" (not first), at most ${max} characters`,
    );
  }
  return value;
}

/**
 * Quotes an identifier for SQL text (`"my""name"`).
 *
 * @param name The identifier.
 * @returns It, double-quoted with inner quotes doubled.
 */
export function quoteIdent(name: string): string {
  return `"${name.replaceAll('"', '""')}"`;
}
