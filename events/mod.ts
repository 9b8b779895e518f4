/**
 * `@fw/events`: typed event messaging for fw (topics, publishers, handlers with retries and
 * dead-lettering, pluggable transports and realtime brokers).
 *
 * This member is being built; for now it re-exports the schema vocabulary used by topics.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { Uuid } from "@fw/events";
 * assert.equal(Uuid.node.format, "uuid");
 * ```
 *
 * @module
 */

export {
  ArrayOf,
  DateIso,
  Desc,
  Email,
  Int,
  Max,
  MaxLength,
  Min,
  MinLength,
  Optional,
  Pattern,
  schema,
  Url,
  Uuid,
} from "@fw/runtime";
export type { InferSchema } from "@fw/runtime";
