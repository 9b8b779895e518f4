/**
 * Message schemas of the streaming example.
 *
 * @module
 */

import { DateIso, Desc, MaxLength, MinLength, Optional, Pattern, schema } from "@fw/application";

/** A price update on the live feed. */
export const Quote = schema("Quote", {
  symbol: Desc("Ticker symbol", Pattern(/^[A-Z]{2,8}$/)),
  price: Desc("Last price", Number),
  change: Desc("Change since the previous quote", Number),
  at: DateIso,
});

/** What a chat client sends. */
export const ChatInput = schema("ChatInput", {
  text: MaxLength(500, MinLength(1)),
});

/** What chat clients receive: a message, or someone joining or leaving. */
export const ChatEvent = schema("ChatEvent", {
  kind: Pattern(/^(message|join|leave)$/),
  from: String,
  text: Optional(String),
  at: DateIso,
});
