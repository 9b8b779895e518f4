/**
 * `@fw/runtime`: what the HTTP and the events halves of fw share.
 *
 * - The schema vocabulary of spec 2.2 (`Uuid`, `Email`, `Int`, `Min`, `Optional`, `ArrayOf`,
 *   `schema`...), with `String`, `Number` and `Boolean` (the global constructors) as primitives.
 * - Time as a dependency (`Clock`, `systemClock`, `ManualClock` for tests).
 * - A minimal metrics interface (`Meter`, `MemoryMeter`, `noopMeter`).
 *
 * @example A schema and its static type
 * ```ts
 * import assert from "node:assert/strict";
 * import { ArrayOf, Email, type InferSchema, Int, Min, Optional, schema } from "@fw/runtime";
 *
 * const User = schema("User", { email: Email, age: Optional(Min(0, Int)), tags: ArrayOf(String) });
 * const ada: InferSchema<typeof User> = { email: "ada@example.com", tags: [] };
 * assert.equal(ada.age, undefined);
 * ```
 *
 * @module
 */

export { type Clock, ManualClock, systemClock, type TimerHandle } from "./clock.ts";
export {
  type Counter,
  type Histogram,
  type InstrumentOptions,
  type Measurement,
  MemoryMeter,
  type Meter,
  type MetricAttributes,
  noopMeter,
} from "./metrics.ts";
export {
  ArrayOf,
  DateIso,
  Desc,
  type Described,
  Email,
  Int,
  Max,
  MaxLength,
  Min,
  MinLength,
  type NumericBase,
  Optional,
  Pattern,
  schema,
  Stream,
  type StringBase,
  toSchemaNode,
  Url,
  Uuid,
} from "./schema.ts";
export type {
  InferSchema,
  InferShape,
  ObjectSchema,
  OptionalKeys,
  OptionalSchema,
  RequiredKeys,
  Schema,
  SchemaFormat,
  SchemaKind,
  SchemaLike,
  SchemaNode,
  SchemaShape,
  Simplify,
  StreamSchema,
} from "./schema_types.ts";
