/**
 * Internal to the NATS JetStream client: delayed publishes on a server without per-message
 * scheduling (nats-server 2.9 has none; `Nats-Schedule` headers came much later).
 *
 * - A delayed message goes to a second stream, `<stream>_DELAYED` (work-queue retention, file
 *   storage unless the client's is memory), as subject `<subjectPrefix>_delayed.<topic>` with its
 *   due time in the `Fw-Deliver-At` header (ms since the epoch). It is stored at once, so it
 *   survives restarts of the publishing and consuming processes.
 * - One durable consumer of that stream, `fw_delay_mover`, is shared by every process that
 *   subscribes to anything (they compete for its messages). A mover that receives a message before
 *   its time NAKs it with the time left (JetStream's `nak(delay)`): the server holds it and hands
 *   it out again then, with no polling. A message that is due is published to its topic's subject
 *   on the main stream (with `Nats-Msg-Id` `fw-delayed:<delay stream sequence>:<due time>`, so a mover that
 *   dies between that publish and its ack does not store it twice within the de-duplication
 *   window) and then acknowledged, which removes it from the work queue.
 * - The mover consumer has no delivery limit (each early look counts as a delivery), a 5 s ack wait
 *   (a mover killed with messages in hand loses them to another after that) and a high
 *   `max_ack_pending` (every waiting message is pending with the server): at most
 *   {@linkcode NATS_DELAY_PENDING} messages wait at once; more wait in the stream until room frees.
 *
 * @module
 */

import {
  AckPolicy,
  DeliverPolicy,
  type JetStreamClient,
  type JetStreamManager,
  type JsMsg,
  RetentionPolicy,
  StorageType,
} from "@nats-io/jetstream";
import { headers, type MsgHdrs } from "@nats-io/transport-node";

/** The header that carries a delayed message's due time. */
export const DELIVER_AT_HEADER = "Fw-Deliver-At";

/** How far ahead a delayed publish may be due on NATS JetStream: 30 days. */
export const NATS_MAX_DELAY_MS = 30 * 24 * 3600_000;

/** Most delayed messages waiting with the server at once. */
export const NATS_DELAY_PENDING = 1_000_000;

const MOVER = "fw_delay_mover";

/**
 * How long one pull request of a consuming loop waits, in ms. The server sends idle heartbeats
 * every half of it; after two missed ones (a node that led the consumer died, a connection that
 * moved to another node) the client checks the consumer and pulls again. The client's default
 * (30 s) left a consumer idle for up to a minute after a cluster lost its leader.
 */
export const NATS_PULL_EXPIRES_MS = 5_000;

/**
 * How long the server waits before it hands a message held by a mover that died (before it NAKed
 * or moved it) to another: short, since a live mover answers each look at once.
 */
const MOVER_ACK_WAIT_MS = 5_000;

/** What the delay stream needs from the client's settings. */
export interface DelayStreamSettings {
  /** The main stream's name. */
  readonly stream: string;
  /** The subject prefix of the main stream. */
  readonly prefix: string;
  readonly storage: "file" | "memory";
  readonly replicas: number;
  readonly duplicateWindowMs: number;
}

/** The delay stream's name. */
export function delayStreamName(s: DelayStreamSettings): string {
  return `${s.stream}_DELAYED`;
}

/** The delay stream's subject for a topic. */
export function delayedSubject(s: DelayStreamSettings, topic: string): string {
  return `${s.prefix}_delayed.${topic}`;
}

/**
 * Creates the delay stream when missing.
 *
 * @param jsm The JetStream manager.
 * @param s Settings.
 */
export async function ensureDelayStream(
  jsm: JetStreamManager,
  s: DelayStreamSettings,
): Promise<void> {
  const name = delayStreamName(s);
  if (await jsm.streams.info(name).then(() => true, () => false)) return;
  await jsm.streams.add({
    name,
    subjects: [`${s.prefix}_delayed.>`],
    retention: RetentionPolicy.Workqueue,
    storage: s.storage === "memory" ? StorageType.Memory : StorageType.File,
    num_replicas: s.replicas,
    duplicate_window: s.duplicateWindowMs * 1_000_000,
  }).catch((err) => awaitConcurrentStream(jsm, name, err));
}

/**
 * After a refused stream create: another process may be creating the same stream at the same
 * moment, and JetStream can refuse the loser of that race ("subjects overlap with an existing
 * stream") before the winner's stream is visible. Looks for the stream a few times (up to about
 * 300 ms in all) and throws the refusal when it does not appear.
 *
 * @param jsm The JetStream manager.
 * @param name The stream.
 * @param err The refusal.
 */
export async function awaitConcurrentStream(
  jsm: JetStreamManager,
  name: string,
  err: unknown,
): Promise<void> {
  for (let attempt = 1; attempt <= 5; attempt++) {
    if (await jsm.streams.info(name).then(() => true, () => false)) return;
    await new Promise((resolve) => setTimeout(resolve, 20 * attempt));
  }
  throw err;
}

/** One client's delayed publishes: the delay stream (created once) and its mover. */
export class NatsDelays {
  readonly #s: DelayStreamSettings;
  #stream: Promise<void> | undefined;
  #mover: Promise<DelayMover> | undefined;

  /** @param settings The client's stream settings. */
  constructor(settings: DelayStreamSettings) {
    this.#s = settings;
  }

  /** The delay stream's name. */
  get stream(): string {
    return delayStreamName(this.#s);
  }

  /**
   * Where a publish goes: for a due time still ahead, the delay stream's subject (the due time is
   * added to `h`), else `subject`.
   */
  async route(
    jsm: JetStreamManager,
    topic: string,
    subject: string,
    h: MsgHdrs,
    at: number | undefined,
  ): Promise<string> {
    if (at === undefined || at <= Date.now()) return subject;
    const ready = this.#stream ??= ensureDelayStream(jsm, this.#s);
    ready.catch(() => this.#stream = undefined);
    await ready;
    h.set(DELIVER_AT_HEADER, String(Math.ceil(at)));
    return delayedSubject(this.#s, topic);
  }

  /** Starts the mover once (on the client's first subscription). */
  async start(js: JetStreamClient, jsm: JetStreamManager): Promise<void> {
    await (this.#mover ??= (async () => {
      const mover = new DelayMover(js, jsm, this.#s, (message, error) => {
        console.warn(message, String(error));
      });
      await mover.start();
      return mover;
    })());
  }

  /** Stops the mover (waiting messages stay with the server). */
  async close(): Promise<void> {
    await this.#mover?.then((m) => m.close(), () => {});
  }
}

/** Moves due messages from the delay stream to the main stream, for one client. */
export class DelayMover {
  readonly #js: JetStreamClient;
  readonly #jsm: JetStreamManager;
  readonly #s: DelayStreamSettings;
  readonly #warn: (message: string, error: unknown) => void;
  #messages: { close(): Promise<void | Error> } | undefined;
  #closed = false;

  /**
   * @param js JetStream client.
   * @param jsm JetStream manager.
   * @param s Settings.
   * @param warn Reports a failed move (the message comes again after the consumer's ack wait).
   */
  constructor(
    js: JetStreamClient,
    jsm: JetStreamManager,
    s: DelayStreamSettings,
    warn: (message: string, error: unknown) => void,
  ) {
    this.#js = js;
    this.#jsm = jsm;
    this.#s = s;
    this.#warn = warn;
  }

  /** Creates the stream and its mover consumer when missing, and starts consuming. */
  async start(): Promise<void> {
    const s = this.#s;
    await ensureDelayStream(this.#jsm, s);
    const stream = delayStreamName(s);
    const exists = await this.#jsm.consumers.info(stream, MOVER).then(() => true, () => false);
    if (!exists) {
      await this.#jsm.consumers.add(stream, {
        durable_name: MOVER,
        ack_policy: AckPolicy.Explicit,
        deliver_policy: DeliverPolicy.All,
        ack_wait: MOVER_ACK_WAIT_MS * 1_000_000,
        max_deliver: -1,
        max_ack_pending: NATS_DELAY_PENDING,
      }).catch(async (err) => {
        await this.#jsm.consumers.info(stream, MOVER).catch(() => {
          throw err;
        });
      });
    }
    if (this.#closed) return;
    const consumer = await this.#js.consumers.get(stream, MOVER);
    this.#messages = await consumer.consume({
      max_messages: 1000,
      expires: NATS_PULL_EXPIRES_MS,
      callback: (m) => void this.#look(m),
    });
  }

  async #look(m: JsMsg): Promise<void> {
    const at = Number(m.headers?.get(DELIVER_AT_HEADER));
    const left = Number.isFinite(at) ? at - Date.now() : 0;
    if (left > 0) {
      m.nak(left);
      return;
    }
    const h = headers();
    if (m.headers) {
      for (const k of m.headers.keys()) {
        if (k !== DELIVER_AT_HEADER && !k.startsWith("Nats-")) h.set(k, m.headers.get(k));
      }
    }
    const topic = m.subject.slice(this.#s.prefix.length + "_delayed.".length);
    try {
      await this.#js.publish(`${this.#s.prefix}.${topic}`, m.data, {
        headers: h,
        msgID: `fw-delayed:${m.seq}:${at}`,
      });
      m.ack();
    } catch (err) {
      if (!this.#closed) this.#warn("nats jetstream: moving a due delayed message failed", err);
      m.nak(1000);
    }
  }

  /** Stops consuming (waiting messages stay with the server). */
  async close(): Promise<void> {
    this.#closed = true;
    await this.#messages?.close();
  }
}
