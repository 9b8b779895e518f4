/**
 * The live feed behind the dashboard: order summaries pushed to every open SSE connection of this
 * instance. Each subscriber has a bounded queue; one that falls 256 updates behind is dropped
 * (its browser reconnects and starts again from the recent orders).
 *
 * @module
 */

import type { OrderSummary } from "./schemas.ts";

const MAX_LAG = 256;

/** Fans order summaries out to the open dashboards of this instance. */
export class LiveOrders {
  readonly #listeners = new Set<(summary: OrderSummary) => void>();

  /** Open dashboards. */
  get subscribers(): number {
    return this.#listeners.size;
  }

  /** Sends a summary to every open dashboard. */
  publish(summary: OrderSummary): void {
    for (const listener of this.#listeners) listener(summary);
  }

  /**
   * The summaries published from now until `signal` aborts: the subscription starts at once, so
   * nothing published between this call and the first read is missed.
   */
  subscribe(signal: AbortSignal): AsyncGenerator<OrderSummary> {
    const queue: OrderSummary[] = [];
    const listeners = this.#listeners;
    let wake: (() => void) | undefined;
    let overflow = false;
    const listener = (summary: OrderSummary) => {
      if (queue.length >= MAX_LAG) overflow = true;
      else queue.push(summary);
      wake?.();
    };
    const onAbort = () => {
      listeners.delete(listener);
      wake?.();
    };
    listeners.add(listener);
    signal.addEventListener("abort", onAbort, { once: true });
    return (async function* () {
      try {
        while (!signal.aborted && !overflow) {
          if (queue.length > 0) {
            yield queue.shift()!;
            continue;
          }
          await new Promise<void>((resolve) => wake = resolve);
          wake = undefined;
        }
      } finally {
        listeners.delete(listener);
        signal.removeEventListener("abort", onAbort);
      }
    })();
  }
}
