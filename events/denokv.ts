/**
 * `@fw/events/denokv`: the Deno KV transport. Handlers and publishers in any number of processes
 * share one Deno KV database: a local SQLite file given by `path`, or, with no path, the default
 * database (Deno Deploy's managed KV). Needs `--unstable-kv` (or `"unstable": ["kv"]` in
 * deno.json).
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { denoKvTransport } from "@fw/events/denokv";
 * const transport = denoKvTransport({ path: ":memory:", keyPrefix: "shop" });
 * assert.equal(transport.name, "denokv");
 * await transport.close();
 * ```
 *
 * @module
 */

export {
  DenoKvTransport,
  denoKvTransport,
  type DenoKvTransportOptions,
} from "./transports/deno_kv/deno_kv.ts";
export {
  DenoKvDeadLetters,
  type DenoKvDeadLettersOptions,
} from "./transports/deno_kv/dead_letters.ts";
