/**
 * `cloudPubSubTransport({ client })`: fw handlers on a managed or clustered pub/sub engine (NATS
 * JetStream, Google Cloud Pub/Sub, ...) reached through the structural
 * {@linkcode CloudPubSubClient}.
 *
 * - Each handler group is one subscription (named `<topic>~<group>`), shared by its instances,
 *   which compete for messages; each instance of a broadcast group gets an ephemeral
 *   subscription of its own (`<topic>~<group>~<instance>`), removed when it leaves.
 * - A successful handler acks; a failed one nacks with the delay of fw's back-off (the engine's
 *   own retry policy where it has no per-message delay). The engine's delivery count is the
 *   handler's `eventAttempt`.
 * - After `maxRetries`, fw dead-letters to `<topic>.dlq`; when the subscription's delivery limit
 *   (`maxDeliveries`) comes first, the transport dead-letters on the last allowed delivery, so
 *   each failed message ends as exactly one dead letter. Dead letters go to the engine when
 *   `<topic>.dlq` has a subscription, else into the transport's bounded buffer.
 * - A message without fw's attributes, or whose body is not JSON, is dead-lettered with the
 *   reason and acknowledged.
 *
 * @module
 */

import { type Clock, type Logger, type Meter, systemClock } from "@fw/runtime";
import { MemoryDeadLetters } from "../../dead_letters.ts";
import { type Envelope, newTraceId } from "../../envelope.ts";
import type { ScheduleStore } from "../../schedule/store.ts";
import type {
  Delivery,
  DeliveryListener,
  QueueStats,
  Subscription,
  SubscriptionSpec,
  Transport,
  TransportCapabilities,
  TransportPublishOptions,
} from "../../transport.ts";
import {
  assertCloudPubSubClient,
  type CloudMessage,
  type CloudPubSubClient,
  type CloudSubscription,
} from "./client.ts";
import { decodeMarked, encodeEnvelope, FW_ID, FW_MARK, isStringMap } from "./_codec.ts";
import { inspectCloud } from "./_inspect.ts";

/** Options of {@linkcode cloudPubSubTransport}. */
export interface CloudPubSubTransportOptions {
  /** The engine's client, usually from an adapter (`natsJetStreamClient()`, ...). */
  client: CloudPubSubClient;
  /**
   * The subscriptions' delivery limit: the most deliveries of one message (default 100). A
   * handler's `maxRetries` normally ends retrying first; when this limit comes first, the
   * transport dead-letters the message on its last allowed delivery.
   */
  maxDeliveries?: number;
  /** How long a delivery the handler's full queue refused waits before it comes again (1000 ms). */
  refusedDelayMs?: number;
  /** Dead letters kept when `<topic>.dlq` has no subscription (default 1000, oldest evicted). */
  deadLetterLimit?: number;
  /** Whether `close()` closes the client too (default `true`). */
  closeClient?: boolean;
  /** Clock for dead-letter times. */
  clock?: Clock;
  /** Logger for dead-lettered foreign messages and failed acks. */
  logger?: Logger;
  /** Meter for `events.dlq.evicted`. */
  meter?: Meter;
}

function positiveInt(name: string, value: number | undefined, fallback: number, min = 1): number {
  const v = value ?? fallback;
  if (!Number.isInteger(v) || v < min) {
    throw new TypeError(
      `Invalid cloudPubSubTransport() option "${name}": expected an integer >= ${min}, got ${v}`,
    );
  }
  return v;
}

function bodyText(data: Uint8Array): unknown {
  try {
    const text = new TextDecoder("utf-8", { fatal: true }).decode(data);
    try {
      return JSON.parse(text);
    } catch {
      return text;
    }
  } catch {
    let bin = "";
    for (const b of data) bin += String.fromCharCode(b);
    return { base64: btoa(bin) };
  }
}

/** What the deliveries of one subscription call back into (one object per subscription). */
interface SubscriptionHooks {
  readonly maxDeliveries: number;
  deadLetterAtLimit(m: CloudMessage, envelope: Envelope, attempt: number): Promise<void>;
}

/** One delivery handed to the consumer: ack and retry are methods, no closures per message. */
class CloudDelivery implements Delivery {
  readonly envelope: Envelope;
  readonly attempt: number;
  readonly #m: CloudMessage;
  readonly #hooks: SubscriptionHooks;

  constructor(envelope: Envelope, attempt: number, m: CloudMessage, hooks: SubscriptionHooks) {
    this.envelope = envelope;
    this.attempt = attempt;
    this.#m = m;
    this.#hooks = hooks;
  }

  ack(): void | Promise<void> {
    return this.#m.ack();
  }

  /** Redelivery, or a dead letter when this was the subscription's last allowed delivery. */
  retry(delayMs: number): void | Promise<void> {
    return this.attempt >= this.#hooks.maxDeliveries
      ? this.#hooks.deadLetterAtLimit(this.#m, this.envelope, this.attempt)
      : this.#m.nack(delayMs);
  }
}

/**
 * The cloud pub/sub transport. Create it with {@linkcode cloudPubSubTransport}.
 *
 * @example
 * ```ts ignore
 * import { cloudPubSubTransport } from "@fw/events/cloud";
 * import { natsJetStreamClient } from "@fw/events/cloud-nats";
 * const transport = cloudPubSubTransport({
 *   client: await natsJetStreamClient({ servers: "127.0.0.1:4222" }),
 * });
 * ```
 */
export class CloudPubSubTransport implements Transport {
  /** `cloud`. */
  readonly name: string = "cloud";
  /**
   * Persistent and external; no per-key ordering promise; no admission at publish; delayed
   * publish as far ahead as the client's `maxDelay` (none when it has none).
   */
  readonly capabilities: TransportCapabilities;
  /** Dead letters kept while `<topic>.dlq` has no subscription. */
  readonly deadLetters: MemoryDeadLetters;

  /** The client's `messaging.system` for spans (`nats`, `gcp_pubsub`), else `cloud`. */
  get messagingSystem(): string {
    return this.#client.system ?? "cloud";
  }
  /** The client's schedule state, when it keeps one (NATS: a key-value bucket). */
  readonly scheduleStore?: () => ScheduleStore;
  readonly #client: CloudPubSubClient;
  readonly #maxDeliveries: number;
  readonly #refusedDelay: number;
  readonly #closeClient: boolean;
  readonly #clock: Clock;
  readonly #logger?: Logger;
  readonly #subscriptions = new Set<CloudSubscription>();
  #closed = false;
  /** Each subscription's backlog, when the client can tell it (NATS JetStream can). */
  readonly inspect?: () => Promise<QueueStats[]>;

  /**
   * Checks the client and options.
   *
   * @param options Client, limits and services.
   * @throws {TypeError} For a client without a required method (named) or a bad number.
   */
  constructor(options: CloudPubSubTransportOptions) {
    if (typeof options !== "object" || options === null) {
      throw new TypeError("Invalid cloudPubSubTransport() options: expected an object");
    }
    this.#client = assertCloudPubSubClient(options.client);
    const client = this.#client;
    if (typeof client.scheduleStore === "function") {
      this.scheduleStore = () => client.scheduleStore!();
    }
    const maxDelay = this.#client.maxDelay;
    this.capabilities = {
      ordering: false,
      persistent: true,
      external: true,
      admission: false,
      ...(typeof maxDelay === "number" && maxDelay > 0 ? { maxDelay } : {}),
    };
    this.#maxDeliveries = positiveInt("maxDeliveries", options.maxDeliveries, 100, 2);
    this.#refusedDelay = positiveInt("refusedDelayMs", options.refusedDelayMs, 1000, 0);
    this.#closeClient = options.closeClient ?? true;
    this.#clock = options.clock ?? systemClock;
    this.#logger = options.logger;
    if (typeof client.inspect === "function") this.inspect = () => inspectCloud(client);
    this.deadLetters = new MemoryDeadLetters({
      limit: positiveInt("deadLetterLimit", options.deadLetterLimit, 1000),
      ...(options.logger ? { logger: options.logger } : {}),
      ...(options.meter ? { meter: options.meter } : {}),
    });
  }

  /**
   * Publishes the envelope to its topic; resolves once the engine stored it. With
   * `options.deliverAt` the client holds it until then (clients with a `maxDelay` only).
   *
   * @throws {TypeError} For attributes that are not strings (they travel as message attributes).
   * @throws {Error} When the transport is closed or the engine refuses the publish.
   */
  async publish(envelope: Envelope, options?: TransportPublishOptions): Promise<void> {
    if (this.#closed) {
      throw new Error(`Cannot publish to topic "${envelope.topic}": the transport is closed`);
    }
    if (!isStringMap(envelope.attributes)) {
      throw new TypeError(
        `Cannot publish to topic "${envelope.topic}": envelope field "attributes" must be a map of strings`,
      );
    }
    const { data, attributes } = encodeEnvelope(envelope);
    await this.#client.publish(envelope.topic, data, {
      attributes,
      ...(envelope.key !== undefined ? { orderingKey: envelope.key } : {}),
      deduplicationId: envelope.dedupeKey !== undefined
        ? `${envelope.topic}:dedupe:${envelope.dedupeKey}`
        : `${envelope.topic}:${envelope.id}:${envelope.publishedAt}`,
      ...(options?.deliverAt !== undefined && this.capabilities.maxDelay !== undefined
        ? { deliverAt: options.deliverAt }
        : {}),
    });
  }

  /**
   * Joins the group's subscription (created on first use).
   *
   * @throws {Error} When the transport is closed or the engine refuses the subscription.
   */
  async subscribe(spec: SubscriptionSpec, listener: DeliveryListener): Promise<Subscription> {
    if (this.#closed) {
      throw new Error(`Cannot subscribe to topic "${spec.topic}": the transport is closed`);
    }
    const broadcast = spec.distribution === "broadcast";
    const name = `${spec.topic}~${spec.group}${broadcast ? `~${spec.instanceId}` : ""}`;
    const hooks: SubscriptionHooks = {
      maxDeliveries: this.#maxDeliveries,
      deadLetterAtLimit: (m, envelope, attempt) =>
        this.#deadLetterAtLimit(spec, m, envelope, attempt),
    };
    const sub = await this.#client.subscribe(
      {
        topic: spec.topic,
        subscription: name,
        ephemeral: broadcast,
        maxDeliveries: this.#maxDeliveries,
      },
      (m) => this.#receive(spec, listener, hooks, m),
    );
    this.#subscriptions.add(sub);
    return {
      close: async () => {
        if (!this.#subscriptions.delete(sub)) return;
        await sub.close();
      },
    };
  }

  #receive(
    spec: SubscriptionSpec,
    listener: DeliveryListener,
    hooks: SubscriptionHooks,
    m: CloudMessage,
  ): void {
    const attempt = Math.max(1, Math.floor(m.deliveryAttempt) || 1);
    // fw's mark alone, when the client can read one attribute without building them all
    const mark = typeof m.attribute === "function" ? m.attribute(FW_MARK) : m.attributes?.[FW_MARK];
    const decoded = decodeMarked(m.data, mark);
    if (!decoded.ok) {
      this.#settle(this.#deadLetterForeign(spec, m, attempt, decoded.reason), m);
      return;
    }
    const envelope = decoded.envelope as Envelope;
    const delivery = new CloudDelivery(envelope, attempt, m, hooks);
    let admission;
    try {
      admission = listener(delivery);
    } catch (err) {
      this.#logger?.error("cloud pub/sub: a subscriber threw; the message comes again", {
        error: err,
        topic: spec.topic,
      });
      admission = "rejected";
    }
    if (admission !== "rejected") return;
    // The engine would not deliver it again after its last allowed delivery: dead-letter it.
    this.#settle(
      attempt >= this.#maxDeliveries
        ? this.#deadLetterAtLimit(spec, m, envelope, attempt)
        : m.nack(this.#refusedDelay),
      undefined,
    );
  }

  #settle(p: void | Promise<void>, m: CloudMessage | undefined): void {
    if (!p) return;
    p.catch((err) => {
      this.#logger?.error("cloud pub/sub: settling a message failed", { error: err });
      if (m) m.nack(this.#refusedDelay);
    });
  }

  async #deadLetterForeign(
    spec: SubscriptionSpec,
    m: CloudMessage,
    attempt: number,
    reason: string,
  ): Promise<void> {
    const attributes: Record<string, string> = {};
    for (const [k, v] of Object.entries(m.attributes ?? {})) {
      if (typeof v === "string") attributes[k] = v;
    }
    const id = attributes[FW_ID] || m.id || crypto.randomUUID();
    await this.deadLetter({
      id,
      topic: `${spec.topic}.dlq`,
      payload: bodyText(m.data),
      attributes: {
        ...attributes,
        "dlq.original_topic": spec.topic,
        "dlq.attempts": String(attempt),
        "dlq.error": reason,
        "dlq.handler": spec.group,
      },
      traceId: newTraceId(),
      publishedAt: this.#clock.now(),
    });
    this.#logger?.error("message handled", {
      event: {
        topic: spec.topic,
        messageId: id,
        attempt,
        outcome: "dead-lettered",
        duration: 0,
        handler: spec.group,
        error: reason,
      },
    });
    await m.ack();
  }

  async #deadLetterAtLimit(
    spec: SubscriptionSpec,
    m: CloudMessage,
    envelope: Envelope,
    attempt: number,
  ): Promise<void> {
    const reason =
      `delivery limit reached: attempt ${attempt} of ${this.#maxDeliveries} failed ("maxDeliveries")`;
    const attrs = isStringMap(envelope.attributes) ? envelope.attributes : {};
    try {
      await this.deadLetter({
        ...envelope,
        topic: `${spec.topic}.dlq`,
        attributes: {
          ...attrs,
          "dlq.original_topic": spec.topic,
          "dlq.attempts": String(attempt),
          "dlq.error": reason,
          "dlq.handler": spec.group,
        },
        publishedAt: this.#clock.now(),
      });
    } catch (err) {
      this.#logger?.error("dead-lettering failed; the message will be redelivered", {
        error: err,
        topic: spec.topic,
      });
      await m.nack(this.#refusedDelay);
      return;
    }
    this.#logger?.error("message handled", {
      traceId: envelope.traceId,
      event: {
        topic: spec.topic,
        messageId: envelope.id,
        attempt,
        outcome: "dead-lettered",
        duration: 0,
        handler: spec.group,
        error: reason,
      },
    });
    await m.ack();
  }

  /**
   * Publishes a dead letter to `<topic>.dlq` when that topic has a subscription, else keeps it in
   * {@linkcode CloudPubSubTransport.deadLetters}.
   */
  async deadLetter(envelope: Envelope): Promise<void> {
    if (await this.#client.hasSubscriptions(envelope.topic)) {
      await this.publish(envelope);
      return;
    }
    this.deadLetters.add(envelope, this.#clock.now());
  }

  /** Closes the remaining subscriptions and, unless `closeClient: false`, the client. */
  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    const subs = [...this.#subscriptions];
    this.#subscriptions.clear();
    await Promise.all(subs.map((s) => s.close()));
    if (this.#closeClient) await this.#client.close();
  }
}

/**
 * Creates a transport on a managed or clustered pub/sub engine.
 *
 * @param options The client (from an adapter) and limits.
 * @returns The transport.
 * @throws {TypeError} For a client without a required method (named) or a bad number.
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { cloudPubSubTransport } from "@fw/events/cloud";
 * assert.throws(
 *   () => cloudPubSubTransport({ client: { publish() {}, subscribe() {} } as never }),
 *   /Invalid cloudPubSubTransport\(\) option "client": missing method "hasSubscriptions"/,
 * );
 * ```
 */
export function cloudPubSubTransport(options: CloudPubSubTransportOptions): CloudPubSubTransport {
  return new CloudPubSubTransport(options);
}
