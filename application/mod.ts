/**
 * `@fw/application`: the HTTP and WebSocket half of fw (applications, plugins, file-based routes,
 * the `endpoint()` builder, content negotiation and OpenAPI).
 *
 * This member is being built; for now it re-exports the schema vocabulary so that one import line
 * serves a route file.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { Int } from "@fw/application";
 * assert.equal(Int.node.kind, "integer");
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
  Stream,
  Url,
  Uuid,
} from "@fw/runtime";
export type { InferSchema } from "@fw/runtime";
