/**
 * The services behind the streaming example, provided through dependency injection: a quote
 * ticker publishing to a hub, and chat rooms (one hub each).
 *
 * @module
 */

import type { InferSchema } from "@fw/application";
import { provider } from "@fw/runtime";
import { Hub } from "./hub.ts";
import type { ChatEvent, Quote } from "./schemas.ts";

/** A quote. */
export type QuoteMessage = InferSchema<typeof Quote>;
/** A chat event. */
export type ChatMessage = InferSchema<typeof ChatEvent>;

const SYMBOLS = ["ACME", "GLOBEX", "INITECH", "UMBRELLA"];

/** Publishes a random-walk quote for one symbol every `intervalMs`. */
export class Ticker {
  readonly hub: Hub<QuoteMessage> = new Hub({ replay: 200 });
  readonly #prices = new Map(SYMBOLS.map((s, i) => [s, 100 + i * 25]));
  readonly #timer: ReturnType<typeof setInterval>;
  #turn = 0;

  constructor(intervalMs: number) {
    this.#timer = setInterval(() => this.tick(), intervalMs);
  }

  /** Publishes the next quote (also called by tests). */
  tick(): QuoteMessage {
    const symbol = SYMBOLS[this.#turn++ % SYMBOLS.length];
    const before = this.#prices.get(symbol)!;
    const price = Math.max(1, Math.round((before + (Math.random() - 0.5) * 2) * 100) / 100);
    this.#prices.set(symbol, price);
    const quote = {
      symbol,
      price,
      change: Math.round((price - before) * 100) / 100,
      at: new Date().toISOString(),
    };
    this.hub.publish(quote);
    return quote;
  }

  /** Stops the timer. */
  stop(): void {
    clearInterval(this.#timer);
  }
}

/** Chat rooms by name, created on first use. */
export class Rooms {
  readonly #rooms = new Map<string, Hub<ChatMessage>>();

  /** The hub of a room. */
  room(name: string): Hub<ChatMessage> {
    let hub = this.#rooms.get(name);
    if (hub === undefined) this.#rooms.set(name, hub = new Hub({ replay: 50, maxLag: 500 }));
    return hub;
  }

  /** Members per room. */
  members(): { name: string; members: number }[] {
    return [...this.#rooms].map(([name, hub]) => ({ name, members: hub.subscribers }));
  }
}

/** The ticker: one per application; `FEED_INTERVAL_MS` sets its pace (default 1000). */
export const Feed = provider({
  name: "Feed",
  factory: () => new Ticker(Number(Deno.env.get("FEED_INTERVAL_MS") ?? 1000)),
  dispose: (ticker) => ticker.stop(),
});

/** The chat rooms: one set per application. */
export const Chat = provider({ name: "Chat", factory: () => new Rooms() });
