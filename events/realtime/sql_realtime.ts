/**
 * `sqlRealtime({ url | client, channelPrefix })`: a live-only realtime broker over PostgreSQL
 * `LISTEN`/`NOTIFY`, for SSE and WebSocket fan-out across processes that share a database.
 *
 * - A publish is one `SELECT pg_notify(channel, message)`: the message (id, topic, payload as
 *   JSON) travels in the notification itself, so it must fit PostgreSQL's limit of 7,999 bytes;
 *   a larger one is refused at publish with a {@linkcode RealtimeMessageTooLargeError}.
 * - Each topic has its own channel, `<channelPrefix>.<topic>` (or `<channelPrefix>.#<hash>` when
 *   that would pass PostgreSQL's 63-byte name limit); every process `LISTEN`s on one dedicated
 *   connection to the channels it has subscribers for and fans out locally.
 * - Nothing is stored: `capabilities.replay` is false, a `from` id gives `recovered: false`.
 *   When the listening connection drops, the client connects again and `LISTEN`s again; what was
 *   published meanwhile is lost, and each subscriber of the channel gets `onGap` with reason
 *   `"disconnected"`.
 * - Ids are `<ms>-<sequence>-<node>`: increasing in publish order within a broker, and unique
 *   across brokers through a random node number.
 *
 * @module
 */

import type { Logger } from "@fw/runtime";
import { checkPayload, checkSubscription, topicName } from "./_fanout.ts";
import {
  checkSqlSource,
  openSql,
  type SqlConnection,
  sqlIdentifier,
  type SqlListenHandle,
  type SqlSource,
} from "../_postgres.ts";
import type {
  RealtimeBroker,
  RealtimeCapabilities,
  RealtimeGap,
  RealtimeMessage,
  RealtimeSubscribeOptions,
  RealtimeSubscription,
  RealtimeTopic,
} from "./realtime.ts";

/** PostgreSQL refuses `NOTIFY` payloads of 8,000 bytes or more. */
export const NOTIFY_LIMIT_BYTES = 7999;
const OWNER = "sqlRealtime()";
const NAME_MAX = 63;

/** Options of {@linkcode sqlRealtime}. */
export interface SqlRealtimeOptions extends SqlSource {
  /**
   * First part of every channel name (letters, digits and `_`, at most 40 characters). Brokers
   * with the same prefix on one database see each other's messages; different prefixes are apart.
   */
  channelPrefix: string;
  /** Pool size of the client fw creates from `url` (default 4). */
  poolSize?: number;
  /** `application_name` of the connections fw creates from `url` (default `"fw-realtime"`). */
  applicationName?: string;
  /** Logger for callbacks that throw and for lost connections. */
  logger?: Logger;
}

/** Thrown by publish when a message does not fit in one `NOTIFY`. */
export class RealtimeMessageTooLargeError extends Error {
  /** The topic name. */
  readonly topic: string;
  /** The encoded size in bytes. */
  readonly bytes: number;

  /**
   * Creates the error.
   *
   * @param topic The topic name.
   * @param bytes The encoded size.
   */
  constructor(topic: string, bytes: number) {
    super(
      `Cannot publish to realtime topic "${topic}": the message is ${bytes} bytes, over the ${NOTIFY_LIMIT_BYTES}-byte NOTIFY limit (send a reference, such as an id to fetch, instead)`,
    );
    this.name = "RealtimeMessageTooLargeError";
    this.topic = topic;
    this.bytes = bytes;
  }
}

type Callback = (message: RealtimeMessage) => void | Promise<void>;

/** One subscriber: delivers in order, awaiting an async callback before the next message. */
class SqlSubscriber implements RealtimeSubscription {
  readonly recovered: boolean;
  #queue: RealtimeMessage[] = [];
  #running: Promise<void> | undefined;
  #closed = false;
  lastId: string;

  constructor(
    recovered: boolean,
    from: string,
    readonly callback: Callback,
    readonly onGap: ((gap: RealtimeGap) => void) | undefined,
    readonly logger: Logger | undefined,
    readonly detach: (s: SqlSubscriber) => Promise<void>,
  ) {
    this.recovered = recovered;
    this.lastId = from;
  }

  deliver(message: RealtimeMessage): void {
    if (this.#closed) return;
    this.lastId = message.id;
    this.#queue.push(message);
    if (this.#running) return;
    const running = this.#drain();
    // A drain that finished synchronously has already cleared the flag.
    if (this.#queue.length > 0 || this.#busy) this.#running = running;
  }

  #busy = false;

  async #drain(): Promise<void> {
    this.#busy = true;
    while (this.#queue.length > 0 && !this.#closed) {
      const message = this.#queue.shift()!;
      try {
        await this.callback(message);
      } catch (error) {
        this.logger?.error("realtime subscriber failed", {
          topic: message.topic,
          id: message.id,
          error,
        });
      }
    }
    this.#busy = false;
    this.#running = undefined;
  }

  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    this.#queue = [];
    await this.detach(this);
    await this.#running;
  }
}

interface Channel {
  readonly topic: string;
  readonly subscribers: Set<SqlSubscriber>;
  listens: number;
  handle?: Promise<SqlListenHandle>;
}

/** FNV-1a (64-bit) as 16 hex characters: a short stable stand-in for a long topic name. */
function hash(text: string): string {
  let h = 0xcbf29ce484222325n;
  for (const b of new TextEncoder().encode(text)) {
    h = ((h ^ BigInt(b)) * 0x100000001b3n) & 0xffffffffffffffffn;
  }
  return h.toString(16).padStart(16, "0");
}

const encoder = new TextEncoder();

/** The PostgreSQL realtime broker class; create one with {@linkcode sqlRealtime}. */
export class SqlRealtime implements RealtimeBroker {
  /** Always `"sql"`. */
  readonly name = "sql";
  /** Live-only. */
  readonly capabilities: RealtimeCapabilities = Object.freeze({ replay: false });
  readonly #source: SqlSource;
  readonly #prefix: string;
  readonly #poolSize: number;
  readonly #applicationName: string;
  readonly #logger?: Logger;
  readonly #node = String(Math.floor(Math.random() * 1e9));
  readonly #channels = new Map<string, Channel>();
  readonly #names = new Map<string, string>();
  #lastMs = 0;
  #seq = 0;
  #opening: Promise<SqlConnection> | undefined;
  #closed = false;

  /**
   * Checks the options; the connection opens on first use.
   *
   * @param options Connection, channel prefix, pool size, logger.
   * @throws {TypeError} For a missing or doubled `url`/`client`, or a bad `channelPrefix`.
   */
  constructor(options: SqlRealtimeOptions) {
    this.#source = { url: options?.url, client: options?.client };
    checkSqlSource(OWNER, this.#source);
    this.#prefix = sqlIdentifier(OWNER, "channelPrefix", options.channelPrefix, 40);
    this.#poolSize = options.poolSize ?? 4;
    this.#applicationName = options.applicationName ?? "fw-realtime";
    this.#logger = options.logger;
  }

  #open(): Promise<SqlConnection> {
    return this.#opening ??= openSql(OWNER, this.#source, {
      max: this.#poolSize,
      applicationName: this.#applicationName,
    }).catch((err) => {
      this.#opening = undefined;
      throw err;
    });
  }

  #channel(topic: string): string {
    let name = this.#names.get(topic);
    if (name === undefined) {
      name = `${this.#prefix}.${topic}`;
      if (encoder.encode(name).length > NAME_MAX) name = `${this.#prefix}.#${hash(topic)}`;
      this.#names.set(topic, name);
    }
    return name;
  }

  #nextId(): string {
    const now = Date.now();
    if (now > this.#lastMs) this.#lastMs = now;
    return `${this.#lastMs}-${++this.#seq}-${this.#node}`;
  }

  /**
   * Validates (given a `Topic`), assigns an id and sends the message with one `NOTIFY`.
   *
   * @throws {RealtimeMessageTooLargeError} When the message does not fit in a `NOTIFY`.
   * @throws {ValidationException} For an invalid payload of a `Topic`.
   */
  async publish(topic: RealtimeTopic, payload: unknown): Promise<RealtimeMessage> {
    if (this.#closed) throw new Error("Realtime broker is closed");
    const name = topicName(topic);
    checkPayload(topic, payload);
    const message: RealtimeMessage = Object.freeze({ id: this.#nextId(), topic: name, payload });
    const text = JSON.stringify(message);
    if (text.length * 3 > NOTIFY_LIMIT_BYTES) {
      const bytes = encoder.encode(text).length;
      if (bytes > NOTIFY_LIMIT_BYTES) throw new RealtimeMessageTooLargeError(name, bytes);
    }
    const { sql } = await this.#open();
    await sql.unsafe("SELECT pg_notify($1, $2)", [this.#channel(name), text], { prepare: true });
    return message;
  }

  /**
   * Subscribes to live messages of a topic (`from` an id gives `recovered: false`: nothing is
   * stored to replay). Resolves once the channel is being listened to.
   */
  async subscribe(
    topic: RealtimeTopic,
    callback: (message: RealtimeMessage) => void | Promise<void>,
    options: RealtimeSubscribeOptions = {},
  ): Promise<RealtimeSubscription> {
    if (this.#closed) throw new Error("Realtime broker is closed");
    const name = checkSubscription(topic, callback);
    const from = options.from ?? "latest";
    const conn = await this.#open();
    const key = this.#channel(name);
    let channel = this.#channels.get(key);
    if (!channel) {
      this.#channels.set(key, channel = { topic: name, subscribers: new Set(), listens: 0 });
    }
    const subscriber = new SqlSubscriber(
      from === "latest",
      from,
      callback,
      options.onGap,
      this.#logger,
      (s) => this.#detach(key, s),
    );
    channel.subscribers.add(subscriber);
    const ch = channel;
    ch.handle ??= Promise.resolve(conn.sql.listen(
      key,
      (text) => this.#receive(ch, text),
      () => this.#listened(ch),
    ));
    try {
      await ch.handle;
    } catch (err) {
      ch.handle = undefined; // the next subscribe tries again
      ch.subscribers.delete(subscriber);
      if (ch.subscribers.size === 0) this.#channels.delete(key);
      throw new Error(`${OWNER} cannot LISTEN at ${conn.where}: ${(err as Error).message}`, {
        cause: err,
      });
    }
    return subscriber;
  }

  #listened(channel: Channel): void {
    if (++channel.listens === 1) return;
    this.#logger?.warn("sql realtime: listening again after the connection dropped", {
      topic: channel.topic,
    });
    for (const s of channel.subscribers) {
      s.onGap?.({ topic: channel.topic, after: s.lastId, reason: "disconnected" });
    }
  }

  #receive(channel: Channel, text: string): void {
    let message: RealtimeMessage;
    try {
      message = JSON.parse(text);
    } catch (error) {
      this.#logger?.warn("sql realtime: dropped a notification that is not JSON", { error });
      return;
    }
    if (message?.topic !== channel.topic || typeof message.id !== "string") return;
    Object.freeze(message);
    for (const s of channel.subscribers) s.deliver(message);
  }

  async #detach(key: string, subscriber: SqlSubscriber): Promise<void> {
    const channel = this.#channels.get(key);
    if (!channel || !channel.subscribers.delete(subscriber)) return;
    if (channel.subscribers.size > 0) return;
    this.#channels.delete(key);
    const handle = await channel.handle?.catch(() => undefined);
    await handle?.unlisten().catch(() => {});
  }

  /** Closes every subscription, stops listening and closes the client fw created. */
  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    const all = [...this.#channels.values()].flatMap((c) => [...c.subscribers]);
    await Promise.all(all.map((s) => s.close()));
    const conn = await this.#opening?.catch(() => undefined);
    await conn?.close();
  }
}

/**
 * Creates a live-only realtime broker over PostgreSQL `LISTEN`/`NOTIFY`.
 *
 * @param options `url` or `client`, `channelPrefix`, `poolSize`, `applicationName`, `logger`.
 * @returns The broker (the connection opens on first use; a failure names host and database).
 * @throws {TypeError} For invalid options.
 *
 * @example
 * ```ts ignore
 * import { sqlRealtime } from "@fw/events/sql";
 * const broker = sqlRealtime({ url: "postgres://app@127.0.0.1/app", channelPrefix: "app" });
 * await broker.subscribe("prices", (m) => console.log(m.id, m.payload));
 * await broker.publish("prices", { symbol: "ACME", price: 12.5 });
 * ```
 */
export function sqlRealtime(options: SqlRealtimeOptions): SqlRealtime {
  return new SqlRealtime(options);
}
