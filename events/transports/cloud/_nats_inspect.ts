/**
 * Internal to the NATS JetStream client: its part of `inspect()`. Each durable consumer of the
 * stream is one subscription; its info tells `num_pending` (messages not yet delivered: waiting)
 * and `num_ack_pending` (delivered, not acknowledged: in flight). JetStream keeps a message that
 * is waiting for a retry as ack-pending until its redelivery, so retries are inside `inFlight`.
 * Consumer info carries no age of the oldest waiting message. Structural types only: the NATS
 * packages are imported by `nats_jetstream.ts` alone.
 *
 * @module
 */

import type { CloudSubscriptionStats } from "./client.ts";

/** The part of a JetStream consumer info this reads. */
interface ConsumerInfoLike {
  readonly name: string;
  readonly config: { readonly filter_subject?: string; readonly description?: string };
  readonly num_pending: number;
  readonly num_ack_pending: number;
  readonly num_redelivered: number;
  readonly num_waiting: number;
}

/** The part of a JetStream manager this uses. */
export interface ConsumerLister {
  readonly consumers: { list(stream: string): AsyncIterable<ConsumerInfoLike> };
}

const NOTE = "JetStream counts messages waiting for a retry as ack-pending (in flight); " +
  "consumer info gives no age of the oldest message";

/**
 * Reads every consumer of the stream.
 *
 * @param jsm The JetStream manager.
 * @param stream The stream.
 * @param prefix The subject prefix (`<prefix>.<topic>`).
 * @returns One entry per consumer.
 */
export async function inspectNats(
  jsm: ConsumerLister,
  stream: string,
  prefix: string,
): Promise<CloudSubscriptionStats[]> {
  const out: CloudSubscriptionStats[] = [];
  for await (const ci of jsm.consumers.list(stream)) {
    const subject = ci.config.filter_subject ?? "";
    out.push({
      subscription: ci.config.description || ci.name,
      topic: subject.startsWith(`${prefix}.`) ? subject.slice(prefix.length + 1) : subject,
      waiting: ci.num_pending,
      inFlight: ci.num_ack_pending,
      details: {
        consumer: ci.name,
        redelivered: ci.num_redelivered,
        pullRequests: ci.num_waiting,
      },
      note: NOTE,
    });
  }
  return out;
}
