/**
 * The topic of the Event Server benchmark (shared by its server and documentation).
 *
 * @module
 */

import { Int, topic } from "@fw/events";

/** A quote: sequence number, publish time (ms, fractional) and text. */
export const BenchQuote = topic("bench.quote", { seq: Int, at: Number, text: String });
