/**
 * Internal to the memory broker: its groups, instances and the delivery object it hands to a
 * subscriber (ack and retry finish synchronously, calling back into the broker).
 *
 * @module
 */

import type { Validator } from "@fw/runtime";
import type { Envelope } from "../envelope.ts";
import type { Delivery, DeliveryListener } from "../transport.ts";

/** One subscriber instance. */
export interface Instance {
  readonly id: string;
  readonly listener: DeliveryListener;
  closed: boolean;
}

/** One subscription group of a topic. */
export interface Group {
  readonly name: string;
  readonly distribution: "competing" | "broadcast";
  instances: Instance[];
  next: number;
  /** Competing messages waiting for an instance: [envelope, attempt]. */
  pending: Array<[Envelope, number]>;
}

/** What a delivery calls back into. */
export interface DeliveryHooks {
  acked(d: MemoryDelivery): void;
  retried(d: MemoryDelivery, delayMs: number): void;
}

/** One delivery of the memory broker: ack and retry finish synchronously. */
export class MemoryDelivery implements Delivery {
  #done = false;
  constructor(
    readonly hooks: DeliveryHooks,
    readonly group: Group,
    readonly instance: Instance,
    readonly envelope: Envelope,
    readonly attempt: number,
    readonly duplicate: boolean,
    readonly validatedBy: Validator<unknown> | undefined,
  ) {}

  ack(): void {
    if (this.#done) return;
    this.#done = true;
    this.hooks.acked(this);
  }

  retry(delayMs: number): void {
    if (this.#done) return;
    this.#done = true;
    this.hooks.retried(this, delayMs);
  }
}
