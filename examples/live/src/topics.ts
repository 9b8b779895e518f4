/**
 * The topics of the live example: orders and quotes, each with a contract version.
 *
 * @module
 */

import { Int, topic } from "@fw/events";

/** A new order. */
export const Orders = topic("live.orders", { n: Int, item: String }, { version: "1" });

/** A price quote. */
export const Quotes = topic("live.quotes", { n: Int, price: Int }, { version: "1" });
