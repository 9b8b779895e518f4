/**
 * The transport interface. A transport carries envelopes from publishers to subscriptions and
 * redelivers them when asked; the delivery policy (filters, concurrency, time-outs, retries with
 * back-off, dead-lettering, metrics and logs) lives in the consumer (`consumer.ts`) and is the
 * same on every transport. Every transport passes the suite in `transports/conformance.ts`.
 *
 * @module
 */

import type { Validator } from "@fw/runtime";
import type { Envelope } from "./envelope.ts";
import type { ScheduleStore } from "./schedule/store.ts";

/** One subscriber instance joining a subscription group. */
export interface SubscriptionSpec {
  /** Topic name. */
  readonly topic: string;
  /** Group name: instances of one group share (competing) or each get (broadcast) its messages. */
  readonly group: string;
  /** How the group's instances share messages. */
  readonly distribution: "competing" | "broadcast";
  /** Unique id of this instance (process + handler). */
  readonly instanceId: string;
  /**
   * The handler's time-out in ms, when known: a transport that takes over deliveries from
   * consumers that stopped answering waits at least this long before it does.
   */
  readonly timeout?: number;
}

/** One message handed to one subscriber instance. */
export interface Delivery {
  /** The envelope (checked by the consumer; a transport may hand over anything it received). */
  readonly envelope: Envelope;
  /** 1-based attempt number. */
  readonly attempt: number;
  /**
   * Set by a transport that could not decode what it received (for example bad JSON): the
   * consumer dead-letters the delivery with this reason and acknowledges it.
   */
  readonly problem?: string;
  /**
   * Set by an in-process transport when the envelope comes straight from the bus's publisher,
   * which built it and produced its payload with this validator (no one else holds the payload):
   * the consumer takes the envelope as well formed and, when its topic has the same validator,
   * gives its handler a copy of the payload instead of validating it again.
   */
  readonly validatedBy?: Validator<unknown>;
  /**
   * Done: the transport forgets the message (for this group or instance). In-process transports
   * may finish synchronously and return nothing; others return a promise of their write.
   */
  ack(): void | Promise<void>;
  /** Redeliver after `delayMs` with `attempt + 1`; the transport owns the timer or the schedule. */
  retry(delayMs: number): void | Promise<void>;
}

/**
 * What a subscriber says when offered a delivery:
 * - `accepted`: it will call `ack()` or `retry()` exactly once;
 * - `rejected`: it cannot take it now (queue full with `overflow: "throw"`); an in-process broker
 *   makes publish throw, an external one redelivers later;
 * - `dropped`: it discarded it (queue full with `overflow: "drop"`); the transport forgets it.
 */
export type Admission = "accepted" | "rejected" | "dropped";

/** Receives deliveries for one subscriber instance. */
export type DeliveryListener = (delivery: Delivery) => Admission;

/** A subscriber instance's handle on its subscription. */
export interface Subscription {
  /** Leaves the group; messages not yet delivered stay with the group (competing) or are not sent. */
  close(): Promise<void>;
}

/** A dead letter held by a transport because nothing subscribes to `<topic>.dlq`. */
export interface DeadLetter {
  /** The dead-letter envelope: topic `<topic>.dlq`, attributes `dlq.*`. */
  readonly envelope: Envelope;
  /** When it was dead-lettered (ms since the epoch). */
  readonly deadAt: number;
}

/** Where a transport keeps dead letters that no `<topic>.dlq` handler takes. */
export interface DeadLetterStore {
  /** Stored dead letters, oldest first. */
  list(options?: { topic?: string }): Promise<DeadLetter[]>;
  /** Removes dead letters by envelope id and returns them. */
  take(ids: readonly string[]): Promise<DeadLetter[]>;
}

/** What a transport can guarantee. */
export interface TransportCapabilities {
  /** Messages with the same `key` reach a group in publish order (with concurrency 1). */
  readonly ordering: boolean;
  /** Messages survive a process restart. */
  readonly persistent: boolean;
  /** Crosses process boundaries: handlers need a stable `group`. */
  readonly external: boolean;
  /** A publish returns only after every subscriber admitted the message (overflow throws). */
  readonly admission: boolean;
  /**
   * Publish accepts {@linkcode TransportPublishOptions.tx}: the message is written in the caller's
   * open database transaction (the outbox pattern). Absent means `false`.
   */
  readonly transactional?: boolean;
  /**
   * The furthest ahead, in ms, a delayed publish ({@linkcode TransportPublishOptions.deliverAt})
   * may be due on this transport. Absent: the transport cannot delay messages, and a publish with
   * `delay` or `deliverAt` throws a `TypeError`.
   */
  readonly maxDelay?: number;
}

/** Per-publish options a transport may support. */
export interface TransportPublishOptions {
  /**
   * An open transaction of the transport's database client (such as the `tx` of postgres.js
   * `sql.begin`): the message is written in it, so it exists only if that transaction commits.
   * Only transports whose `capabilities.transactional` is true accept it.
   */
  readonly tx?: unknown;
  /**
   * Deliver no earlier than this time (ms since the epoch; the `delay` and `deliverAt` publish
   * options). The message is stored at once and handed to subscriptions once it is due; at most
   * {@linkcode TransportCapabilities.maxDelay} ahead. A time already past means now.
   */
  readonly deliverAt?: number;
}

/**
 * What a transport can tell about one subscription group's queue ({@linkcode Transport.inspect}).
 * Fields the engine cannot know are left out, and `note` says why.
 */
export interface QueueStats {
  /** Topic name. */
  readonly topic: string;
  /** Handler group (for broadcast groups on some engines: one entry per instance). */
  readonly group: string;
  /** Messages published but not yet handed to the group. */
  readonly waiting?: number;
  /** Messages handed to a consumer and not yet acknowledged. */
  readonly inFlight?: number;
  /** Messages waiting for a later retry. */
  readonly retrying?: number;
  /** Age of the oldest message still waiting or in flight, in ms. */
  readonly oldestAgeMs?: number;
  /** Engine-specific figures, by name (such as Redis `lag` or NATS `num_ack_pending`). */
  readonly details?: Readonly<Record<string, number | string>>;
  /** What the engine cannot tell, in words. */
  readonly note?: string;
}

/** A reliable handler transport. */
export interface Transport {
  /** Name for logs (`memory`, `denokv`, ...). */
  readonly name: string;
  /** Guarantees. */
  readonly capabilities: TransportCapabilities;
  /** Publishes one envelope to every subscription of its topic. */
  publish(envelope: Envelope, options?: TransportPublishOptions): Promise<void>;
  /** Joins a subscription group as one instance. */
  subscribe(spec: SubscriptionSpec, listener: DeliveryListener): Promise<Subscription>;
  /**
   * Dead-letters an envelope already addressed to `<topic>.dlq`: publishes it when that topic has
   * subscribers, else keeps it in {@linkcode Transport.deadLetters}.
   */
  deadLetter(envelope: Envelope): Promise<void>;
  /** The dead letters this transport keeps. */
  readonly deadLetters: DeadLetterStore;
  /**
   * The backlog of each subscription group, as far as the engine can tell (optional: the
   * operations dashboard shows it when a transport has it).
   */
  inspect?(): Promise<QueueStats[]>;
  /** Releases resources; pending redeliveries are kept where the transport is persistent. */
  close(): Promise<void>;
  /**
   * The store where schedules on this transport keep their shared state (claimed ticks, leases,
   * the last run), in the transport's engine. Absent on transports that cannot run schedules.
   */
  scheduleStore?(): ScheduleStore;
}

/** Thrown by publish when a subscriber's queue is full and its overflow is `throw`. */
export class QueueFullError extends Error {
  /** The topic. */
  readonly topic: string;
  /** The groups that refused the message. */
  readonly groups: readonly string[];
  /**
   * Creates the error.
   *
   * @param topic The topic.
   * @param groups The refusing groups.
   */
  constructor(topic: string, groups: readonly string[]) {
    super(
      `Cannot publish to topic "${topic}": the handler queue is full for group ${
        groups.map((g) => `"${g}"`).join(", ")
      }`,
    );
    this.name = "QueueFullError";
    this.topic = topic;
    this.groups = groups;
  }
}
