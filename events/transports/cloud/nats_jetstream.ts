/**
 * `natsJetStreamClient()`: the {@linkcode CloudPubSubClient} on NATS JetStream, and the one module
 * of `@fw/events` that imports the NATS client (npm `@nats-io/jetstream` with
 * `@nats-io/transport-node`).
 *
 * - One stream (default `FW_EVENTS`) holds every topic as subject `<subjectPrefix>.<topic>`; it
 *   is created on first use (file storage, `maxAgeMs` retention, a de-duplication window).
 * - A subscription is a durable pull consumer filtered to its topic's subject, created on first
 *   use with `deliver_policy: new`, `ack_policy: explicit`, `max_deliver` (the delivery limit) and
 *   `ack_wait`; an ephemeral one (a broadcast instance) also gets `inactive_threshold` and is
 *   deleted on close.
 * - `nack(delay)` is JetStream's `nak(delay)`, so fw's back-off times the redelivery; the
 *   consumer's delivery count is the attempt. While a message is being handled, the client tells
 *   the server it is still working on it every third of `ackWaitMs`, so slow handlers are not
 *   redelivered early.
 * - A publish carries `Nats-Msg-Id` (the deduplication id, or a random one), so retrying it
 *   through a reconnect or a cluster's leader election stores it once; it keeps retrying for
 *   `publishTimeoutMs` while the server is unreachable or the stream has no leader.
 * - In a cluster (`replicas` > 1, every node in `servers`), the stream, the delay stream, the
 *   schedule bucket and the consumers each have a leader. Consumers pull with a 5 s expiry and
 *   2.5 s idle heartbeats, so when a consumer's leader dies the client notices within seconds and
 *   pulls from the new one; messages in hand whose acks were lost are redelivered after
 *   `ackWaitMs` (at least once).
 * - Attributes travel as headers, keys and values percent-encoded (`encodeURIComponent`).
 * - A delayed publish waits in a second stream until a mover puts it on the main stream when it
 *   is due (`_nats_delay.ts`: NAK with delay, since nats-server 2.9 cannot schedule a message).
 *
 * @module
 */

import {
  AckPolicy,
  DeliverPolicy,
  jetstream,
  JetStreamApiCodes,
  JetStreamApiError,
  type JetStreamApiError as JsApiError,
  type JetStreamClient,
  type JetStreamManager,
  jetstreamManager,
  type JsMsg,
  StorageType,
} from "@nats-io/jetstream";
import { connect, headers, type MsgHdrs, type NatsConnection } from "@nats-io/transport-node";
import type {
  CloudMessage,
  CloudPublishOptions,
  CloudPubSubClient,
  CloudSubscribeOptions,
  CloudSubscription,
  CloudSubscriptionStats,
} from "./client.ts";
import { newTraceId } from "../../envelope.ts";
import type { ScheduleStore } from "../../schedule/store.ts";
import { NatsScheduleStore } from "./_schedule_nats.ts";
import {
  awaitConcurrentStream,
  NATS_MAX_DELAY_MS,
  NATS_PULL_EXPIRES_MS,
  NatsDelays,
} from "./_nats_delay.ts";
import { inspectNats } from "./_nats_inspect.ts";
import { InFlight, NatsMessage, type NatsSettler } from "./_nats_message.ts";

/**
 * A connection from `connect()` of npm `@nats-io/transport-node` (or `@nats-io/nats-core`),
 * given as the `connection` option; it stays yours to close.
 */
export interface NatsConnectionLike {
  /** Whether it is closed. */
  isClosed(): boolean;
  /** Closes it. */
  close(): Promise<void>;
}

/** Options of {@linkcode natsJetStreamClient}: `servers` or `connection`, and JetStream settings. */
export interface NatsJetStreamClientOptions {
  /** Server address(es) such as `127.0.0.1:4222`: fw connects (reconnecting forever) and closes. */
  servers?: string | string[];
  /** A connection of yours (yours to close); used when `servers` is not given. */
  connection?: NatsConnectionLike;
  /** Stream name (default `FW_EVENTS`). */
  stream?: string;
  /** First subject token of every topic (default `fw`): topic `a.b` is subject `fw.a.b`. */
  subjectPrefix?: string;
  /** Stream storage (default `file`). */
  storage?: "file" | "memory";
  /**
   * How many servers of a cluster keep a copy of the streams (the main one, the delay stream and
   * the schedule bucket; consumers follow their stream): 1 to 5, default 1 (a single server).
   * On a three-node cluster give 3 with every node in `servers`: a write is confirmed once two of
   * the three have it, and losing one node loses nothing.
   */
  replicas?: number;
  /** How long the stream keeps a message, in ms (default 7 days). */
  maxAgeMs?: number;
  /** Publishes with the same id within this window are stored once, in ms (default 120000). */
  duplicateWindowMs?: number;
  /** Redelivery after this long without an ack from a vanished subscriber, in ms (default 30000). */
  ackWaitMs?: number;
  /** A broadcast instance's subscription expires this long after it vanished, in ms (60000). */
  inactiveThresholdMs?: number;
  /** Messages delivered to one subscription and not yet settled, at most (default 1000). */
  maxAckPending?: number;
  /** How long a publish keeps retrying while the server is unreachable, in ms (default 30000). */
  publishTimeoutMs?: number;
}

const MS = 1_000_000; // nanoseconds per millisecond

function nanos(ms: number): number {
  return ms * MS;
}

function fnv(text: string): string {
  let h = 0x811c9dc5;
  for (let i = 0; i < text.length; i++) {
    h ^= text.charCodeAt(i);
    h = Math.imul(h, 0x01000193) >>> 0;
  }
  return h.toString(16).padStart(8, "0");
}

/** A JetStream consumer name for a subscription name (safe characters, unique by a hash). */
export function natsConsumerName(subscription: string): string {
  return `${subscription.replace(/[^A-Za-z0-9_-]/g, "_").slice(0, 200)}_${fnv(subscription)}`;
}

/** Text `encodeURIComponent` leaves as it is. */
const UNRESERVED = /^[A-Za-z0-9._~!*'()-]*$/;
/** Header names already encoded (a topic's attributes repeat with every publish). */
const encodedNames = new Map<string, string>();

function encodeText(text: string): string {
  return UNRESERVED.test(text) ? text : encodeURIComponent(text);
}

function toHeaders(attributes: Readonly<Record<string, string>>): MsgHdrs {
  const h = headers();
  for (const k in attributes) {
    let name = encodedNames.get(k);
    if (name === undefined) {
      if (encodedNames.size >= 1024) encodedNames.clear();
      encodedNames.set(k, name = encodeURIComponent(k));
    }
    h.set(name, encodeText(attributes[k]));
  }
  return h;
}

function isApiError(err: unknown, code: number): err is JsApiError {
  return err instanceof JetStreamApiError && err.code === code;
}

function integer(
  name: string,
  value: number | undefined,
  fallback: number,
  min = 1,
  max = Number.MAX_SAFE_INTEGER,
): number {
  const v = value ?? fallback;
  if (!Number.isInteger(v) || v < min || v > max) {
    const range = max === Number.MAX_SAFE_INTEGER ? `>= ${min}` : `from ${min} to ${max}`;
    throw new TypeError(
      `Invalid natsJetStreamClient() option "${name}": expected an integer ${range}, got ${v}`,
    );
  }
  return v;
}

const TOKEN = /^[A-Za-z0-9_-]+$/;

interface Ready {
  nc: NatsConnection;
  js: JetStreamClient;
  jsm: JetStreamManager;
}

/** The NATS JetStream client. Create it with {@linkcode natsJetStreamClient}. */
export class NatsJetStreamClient implements CloudPubSubClient {
  /** `nats`. */
  readonly system: string = "nats";
  readonly #servers?: string[];
  readonly #own: boolean;
  readonly #stream: string;
  readonly #prefix: string;
  readonly #o: Required<
    Omit<NatsJetStreamClientOptions, "servers" | "connection" | "stream" | "subjectPrefix">
  >;
  /** Messages being handled, leased every third of `ackWaitMs`. */
  readonly #inFlight = new InFlight();
  /** What received messages settle through (one object, no closures per message). */
  readonly #settler: NatsSettler = { inFlight: this.#inFlight, ack: (m) => this.#ack(m) };
  /** Acks not sent yet: sent together at the end of the event-loop turn ({@linkcode #ack}). */
  #acks: JsMsg[] = [];
  #ackTimer: ReturnType<typeof setTimeout> | undefined;
  readonly #subs = new Set<CloudSubscription>();
  #ready: Promise<Ready> | undefined;
  /** What `#ready` resolved to, for publishes that need not wait a microtask for it. */
  #opened: Ready | undefined;
  #connection?: NatsConnection;
  #lease: ReturnType<typeof setInterval> | undefined;
  #closed = false;
  readonly #delays: NatsDelays;
  /** How far ahead a delayed publish may be due: 30 days. */
  readonly maxDelay: number = NATS_MAX_DELAY_MS;

  /**
   * Checks the options; the connection opens on first use.
   *
   * @param options Servers or a connection, and JetStream settings.
   * @throws {TypeError} For neither or both of `servers` and `connection`, a bad name or number.
   */
  constructor(options: NatsJetStreamClientOptions) {
    const has = (k: keyof NatsJetStreamClientOptions) => options?.[k] !== undefined;
    if (has("servers") === has("connection")) {
      throw new TypeError(
        'Invalid natsJetStreamClient() options: give exactly one of "servers" and "connection"',
      );
    }
    if (has("servers")) {
      const s = typeof options.servers === "string" ? [options.servers] : options.servers!;
      if (!Array.isArray(s) || s.length === 0 || s.some((x) => typeof x !== "string" || !x)) {
        throw new TypeError(
          'Invalid natsJetStreamClient() option "servers": expected a non-empty address or list',
        );
      }
      this.#servers = s;
    }
    this.#connection = options.connection as NatsConnection | undefined;
    this.#own = this.#servers !== undefined;
    this.#stream = options.stream ?? "FW_EVENTS";
    this.#prefix = options.subjectPrefix ?? "fw";
    if (!TOKEN.test(this.#stream)) {
      throw new TypeError(
        `Invalid natsJetStreamClient() option "stream": expected letters, digits, "_" or "-", got "${this.#stream}"`,
      );
    }
    if (!TOKEN.test(this.#prefix)) {
      throw new TypeError(
        `Invalid natsJetStreamClient() option "subjectPrefix": expected letters, digits, "_" or "-", got "${this.#prefix}"`,
      );
    }
    if (
      options.storage !== undefined && options.storage !== "file" && options.storage !== "memory"
    ) {
      throw new TypeError(
        `Invalid natsJetStreamClient() option "storage": expected "file" or "memory", got "${options.storage}"`,
      );
    }
    this.#o = {
      storage: options.storage ?? "file",
      replicas: integer("replicas", options.replicas, 1, 1, 5),
      maxAgeMs: integer("maxAgeMs", options.maxAgeMs, 7 * 24 * 3600_000),
      duplicateWindowMs: integer("duplicateWindowMs", options.duplicateWindowMs, 120_000),
      ackWaitMs: integer("ackWaitMs", options.ackWaitMs, 30_000, 100),
      inactiveThresholdMs: integer("inactiveThresholdMs", options.inactiveThresholdMs, 60_000),
      maxAckPending: integer("maxAckPending", options.maxAckPending, 1000),
      publishTimeoutMs: integer("publishTimeoutMs", options.publishTimeoutMs, 30_000, 0),
    };
    this.#delays = new NatsDelays({ stream: this.#stream, prefix: this.#prefix, ...this.#o });
  }

  /** The stream name. */
  get stream(): string {
    return this.#stream;
  }

  /** The subject of a topic. */
  subject(topic: string): string {
    return `${this.#prefix}.${topic}`;
  }

  #open(): Promise<Ready> {
    if (this.#ready) return this.#ready;
    const where = this.#servers?.map((s) => `"${s}"`).join(", ") ?? "the given connection";
    const ready = (async () => {
      let nc = this.#connection;
      if (!nc) {
        try {
          nc = await connect({
            servers: this.#servers!,
            name: "fw-events",
            maxReconnectAttempts: -1,
            reconnectTimeWait: 250,
            // Otherwise the client makes two Error objects (stack traces) per publish, in case
            // the request times out; a time-out still fails the publish, with fw's message.
            noAsyncTraces: true,
          });
        } catch (err) {
          throw new Error(`Cannot connect to NATS at ${where}: ${(err as Error).message}`, {
            cause: err,
          });
        }
        this.#connection = nc;
        if (this.#closed) {
          await nc.close();
          throw new Error("Cannot use the NATS JetStream client: it is closed");
        }
      }
      let jsm: JetStreamManager;
      try {
        jsm = await jetstreamManager(nc);
        await this.#ensureStream(jsm);
      } catch (err) {
        if (this.#own) await nc.close().catch(() => {});
        throw new Error(
          `Cannot use JetStream stream "${this.#stream}" on NATS at ${where}: ${
            (err as Error).message
          }`,
          { cause: err },
        );
      }
      return this.#opened = { nc, js: jetstream(nc), jsm };
    })();
    this.#ready = ready;
    ready.catch(() => {
      if (this.#ready === ready) this.#ready = undefined;
    });
    return ready;
  }

  async #ensureStream(jsm: JetStreamManager): Promise<void> {
    try {
      await jsm.streams.info(this.#stream);
      return;
    } catch (err) {
      if (!isApiError(err, JetStreamApiCodes.StreamNotFound)) throw err;
    }
    try {
      await jsm.streams.add({
        name: this.#stream,
        subjects: [`${this.#prefix}.>`],
        storage: this.#o.storage === "memory" ? StorageType.Memory : StorageType.File,
        num_replicas: this.#o.replicas,
        max_age: nanos(this.#o.maxAgeMs),
        duplicate_window: nanos(this.#o.duplicateWindowMs),
      });
    } catch (err) {
      // Another process may have created it at the same moment.
      await awaitConcurrentStream(jsm, this.#stream, err);
    }
  }

  /**
   * Publishes to the topic's subject with the attributes as headers and the deduplication id (or
   * a random one) as `Nats-Msg-Id`; retries through a reconnect or a cluster's leader election for
   * `publishTimeoutMs`, every attempt with that id, so the message is stored once.
   *
   * @returns `<stream>:<sequence>`.
   * @throws {Error} When the server does not store it in time or refuses it.
   */
  async publish(topic: string, data: Uint8Array, options: CloudPublishOptions): Promise<string> {
    // Once connected, no await before the send: publishes made together reach the socket in
    // one write (the NATS client writes once per microtask cycle).
    const { js, jsm } = this.#opened ?? await this.#open();
    const h = toHeaders(options.attributes);
    const at = options.deliverAt;
    const subject = at === undefined
      ? this.subject(topic)
      : await this.#delays.route(jsm, topic, this.subject(topic), h, at);
    // Every attempt carries the same id, so an attempt the server stored but could not confirm
    // (a timeout while a cluster elects a new stream leader) is not stored again by the next.
    // The random id is 128 bits cut from a pooled block (as trace ids are), not a UUID per call.
    const publishOptions = {
      headers: h,
      msgID: options.deduplicationId || `fw:${newTraceId()}`,
    };
    let deadline: number | undefined;
    for (let delay = 50;; delay = Math.min(delay * 2, 1000)) {
      try {
        const ack = await js.publish(subject, data, publishOptions);
        return `${ack.stream}:${ack.seq}`;
      } catch (err) {
        deadline ??= Date.now() + this.#o.publishTimeoutMs;
        const permanent = this.#closed ||
          (err instanceof JetStreamApiError && err.status === 400) ||
          (err as Error).name === "InvalidArgumentError";
        if (permanent || Date.now() + delay > deadline) {
          throw new Error(
            `Cannot publish to topic "${topic}" on NATS JetStream: ${(err as Error).message}`,
            { cause: err },
          );
        }
        await new Promise((r) => setTimeout(r, delay));
      }
    }
  }

  /**
   * Creates (or updates) the durable consumer and consumes it.
   *
   * @throws {Error} When the server refuses the consumer.
   */
  async subscribe(
    options: CloudSubscribeOptions,
    onMessage: (message: CloudMessage) => void,
  ): Promise<CloudSubscription> {
    const { js, jsm } = await this.#open();
    // The delay mover's stream and consumer are made while this subscription's consumer is (on a
    // cluster each takes a consensus round); its failure is reported below, after the consumer's.
    const mover = this.#delays.start(js, jsm);
    mover.catch(() => {});
    const name = natsConsumerName(options.subscription);
    const subject = this.subject(options.topic);
    const o = this.#o;
    const limits = {
      max_deliver: options.maxDeliveries,
      ack_wait: nanos(o.ackWaitMs),
      max_ack_pending: o.maxAckPending,
    };
    let exists = false;
    try {
      const info = await jsm.consumers.info(this.#stream, name);
      exists = true;
      const c = info.config;
      if (
        c.max_deliver !== limits.max_deliver || c.ack_wait !== limits.ack_wait ||
        c.max_ack_pending !== limits.max_ack_pending
      ) {
        await jsm.consumers.update(this.#stream, name, limits);
      }
    } catch (err) {
      if (exists || !isApiError(err, JetStreamApiCodes.ConsumerNotFound)) throw err;
    }
    if (!exists) {
      await jsm.consumers.add(this.#stream, {
        durable_name: name,
        description: options.subscription,
        filter_subject: subject,
        ack_policy: AckPolicy.Explicit,
        deliver_policy: DeliverPolicy.New,
        ...limits,
        ...(options.ephemeral ? { inactive_threshold: nanos(o.inactiveThresholdMs) } : {}),
      });
    }
    await mover;
    const consumer = await js.consumers.get(this.#stream, name);
    let closed = false;
    const inFlight = this.#inFlight;
    const settler = this.#settler;
    const messages = await consumer.consume({
      max_messages: Math.min(o.maxAckPending, 500),
      expires: NATS_PULL_EXPIRES_MS,
      callback: (m) => {
        if (closed) {
          m.nak();
          return;
        }
        const message = new NatsMessage(m, settler);
        inFlight.add(message);
        onMessage(message);
      },
    });
    this.#startLease();
    const sub: CloudSubscription = {
      close: async () => {
        if (closed) return;
        closed = true;
        this.#subs.delete(sub);
        this.#flushAcks();
        await messages.close();
        if (options.ephemeral) {
          await jsm.consumers.delete(this.#stream, name).catch(() => {});
        }
      },
    };
    this.#subs.add(sub);
    return sub;
  }

  /**
   * Queues an ack. The NATS client writes to the socket once per microtask cycle that has
   * something to send; handlers that settle one after another (concurrency 1) each settle in
   * a cycle of their own, so acks sent at once cost a socket write each. Acks queued here go out
   * together when the turn ends (a 0 ms timer per batch, or at once when 256 wait), in one
   * write. An ack that never leaves (the process dies first) only means a redelivery.
   */
  #ack(m: JsMsg): void {
    const acks = this.#acks;
    acks.push(m);
    if (acks.length >= 256) this.#flushAcks();
    else this.#ackTimer ??= setTimeout(this.#flushAcks, 0);
  }

  /** Sends the queued acks. */
  #flushAcks = (): void => {
    if (this.#ackTimer !== undefined) {
      clearTimeout(this.#ackTimer);
      this.#ackTimer = undefined;
    }
    const acks = this.#acks;
    if (acks.length === 0) return;
    this.#acks = [];
    for (let i = 0; i < acks.length; i++) {
      try {
        acks[i].ack();
      } catch {
        // The connection closed: the server redelivers the message (at-least-once).
      }
    }
  };

  #startLease(): void {
    if (this.#lease !== undefined) return;
    this.#lease = setInterval(() => {
      this.#inFlight.working();
    }, Math.max(50, Math.floor(this.#o.ackWaitMs / 3)));
  }

  /** Each consumer's pending and ack-pending counts (`inspect()` of the transport). */
  async inspect(): Promise<CloudSubscriptionStats[]> {
    const { jsm } = await this.#open();
    return inspectNats(jsm, this.#stream, this.#prefix);
  }

  /** Whether a consumer of the stream is filtered to the topic's subject. */
  async hasSubscriptions(topic: string): Promise<boolean> {
    const { jsm } = await this.#open();
    const subject = this.subject(topic);
    for await (const ci of jsm.consumers.list(this.#stream)) {
      const c = ci.config;
      if (c.filter_subject === subject || c.filter_subjects?.includes(subject)) return true;
    }
    return false;
  }

  /** Removes the stream with every message and consumer (for tests and tear-down). */
  async deleteStream(): Promise<void> {
    const { jsm } = await this.#open();
    for (const name of [this.#stream, this.#delays.stream]) {
      await jsm.streams.delete(name).catch((err) => {
        if (!isApiError(err, JetStreamApiCodes.StreamNotFound)) throw err;
      });
    }
  }

  /** Stops every subscription and closes the connection when fw opened it. */
  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    await Promise.all([...this.#subs].map((s) => s.close()));
    this.#flushAcks();
    await this.#delays.close();
    if (this.#lease !== undefined) clearInterval(this.#lease);
    this.#lease = undefined;
    this.#inFlight.clear();
    const ready = this.#ready;
    if (ready) await ready.catch(() => undefined);
    if (this.#own && this.#connection && !this.#connection.isClosed()) {
      await this.#connection.close();
    }
  }

  /** Schedule state in the JetStream key-value bucket `<stream>_SCHEDULES`. */
  scheduleStore(): ScheduleStore {
    return this.#schedules ??= new NatsScheduleStore(
      async () => (await this.#open()).nc,
      `${this.#stream}_SCHEDULES`,
      this.#o,
    );
  }
  #schedules: ScheduleStore | undefined;
}

/**
 * Creates a {@linkcode CloudPubSubClient} on NATS JetStream for `cloudPubSubTransport()`.
 *
 * @param options `servers` (fw connects and closes) or a `connection` of yours, and settings.
 * @returns The client; it connects on first use and fails then, naming the address.
 * @throws {TypeError} For neither or both of `servers` and `connection`, a bad name or number.
 * @example
 * ```ts ignore
 * import { cloudPubSubTransport } from "@fw/events/cloud";
 * import { natsJetStreamClient } from "@fw/events/cloud-nats";
 * const transport = cloudPubSubTransport({
 *   client: natsJetStreamClient({ servers: "127.0.0.1:4222", stream: "ORDERS" }),
 * });
 * ```
 */
export function natsJetStreamClient(options: NatsJetStreamClientOptions): NatsJetStreamClient {
  return new NatsJetStreamClient(options);
}
