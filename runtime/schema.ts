/**
 * The schema vocabulary: format schemas, constraints and combinators.
 *
 * Composition form: every constraint takes the schema it narrows as an optional last argument, the
 * same way `Desc(text, T)` does. Without it, number constraints narrow `Number` and string
 * constraints narrow `String`:
 *
 * - `Min(0)` is a number >= 0; `Min(0, Int)` an integer >= 0; `Max(10, Min(1, Int))` an integer
 *   in 1..10.
 * - `MinLength(3)` is a string of at least 3 characters; `MaxLength(80, Email)` an email of at most
 *   80; `Pattern(/^[a-z]+$/, MinLength(2))` both.
 * - `Optional`, `ArrayOf`, `Desc` and `Stream` wrap any schema, including nested plain objects.
 *
 * Invalid schemas fail when they are built, with a `TypeError` naming the property path.
 *
 * @module
 */

import type {
  InferSchema,
  InferShape,
  ObjectSchema,
  OptionalSchema,
  Schema,
  SchemaLike,
  SchemaNode,
  SchemaShape,
  StreamSchema,
} from "./schema_types.ts";

function make<T>(node: SchemaNode): Schema<T> {
  return Object.freeze({ node: Object.freeze(node) }) as Schema<T>;
}

function describe(value: unknown): string {
  if (value === null) return "null";
  if (typeof value === "function") return `function ${value.name || "(anonymous)"}`;
  if (typeof value === "string") return `"${value}"`;
  if (typeof value === "object") return Array.isArray(value) ? "an array" : "an object";
  return String(value);
}

function isSchema(value: unknown): value is Schema<unknown> {
  return typeof value === "object" && value !== null && "node" in value &&
    typeof (value as { node: unknown }).node === "object" &&
    typeof (value as { node: { kind?: unknown } }).node?.kind === "string";
}

function isPlainObject(value: unknown): value is Record<string, unknown> {
  if (typeof value !== "object" || value === null || Array.isArray(value)) return false;
  const proto = Object.getPrototypeOf(value);
  return proto === Object.prototype || proto === null;
}

/**
 * Normalise any schema value into its {@linkcode SchemaNode}.
 *
 * @param value A schema value: `String`, `Number`, `Boolean`, a vocabulary schema or a plain object
 *   of schemas.
 * @param path Property path used in error messages (for example `body.address`).
 * @returns The normalised node.
 * @throws {TypeError} When `value` (or anything nested in it) is not a schema.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { Int, toSchemaNode } from "@fw/runtime";
 * assert.equal(toSchemaNode({ id: Int }).properties?.id.kind, "integer");
 * ```
 */
export function toSchemaNode(value: unknown, path = "schema"): SchemaNode {
  if (value === String) return STRING_NODE;
  if (value === Number) return NUMBER_NODE;
  if (value === Boolean) return BOOLEAN_NODE;
  if (isSchema(value)) return value.node;
  if (isPlainObject(value)) {
    const properties: Record<string, SchemaNode> = {};
    for (const key of Object.keys(value)) {
      if (key === "__proto__" || key === "constructor" || key === "prototype") {
        throw new TypeError(`Invalid schema at "${path}": property name "${key}" is not allowed`);
      }
      properties[key] = toSchemaNode(value[key], `${path}.${key}`);
    }
    return Object.freeze({ kind: "object", properties: Object.freeze(properties) });
  }
  throw new TypeError(`Invalid schema at "${path}": expected a schema, got ${describe(value)}`);
}

const STRING_NODE: SchemaNode = Object.freeze({ kind: "string" });
const NUMBER_NODE: SchemaNode = Object.freeze({ kind: "number" });
const BOOLEAN_NODE: SchemaNode = Object.freeze({ kind: "boolean" });

/** A version-4 (random) UUID string, such as `crypto.randomUUID()` makes, in either case. */
export const Uuid: Schema<string> = make({ kind: "string", format: "uuid" });
/** A valid email address. */
export const Email: Schema<string> = make({ kind: "string", format: "email" });
/** An integer: a number with no fractional part. */
export const Int: Schema<number> = make({ kind: "integer" });
/** A string the WHATWG URL parser accepts as an absolute URL. */
export const Url: Schema<string> = make({ kind: "string", format: "uri" });
/** An ISO 8601 date-time string such as `2026-11-22T10:00:00Z`. */
export const DateIso: Schema<string> = make({ kind: "string", format: "date-time" });

/** A schema that number constraints can narrow: `Number`, `Int` or an already narrowed number. */
export type NumericBase = NumberConstructor | Schema<number>;
/** A schema that string constraints can narrow: `String`, a format such as `Email`, or a narrowed string. */
export type StringBase = StringConstructor | Schema<string>;

function finite(fn: string, n: unknown): number {
  if (typeof n !== "number" || !Number.isFinite(n)) {
    throw new TypeError(`Invalid schema: ${fn}() expects a finite number, got ${describe(n)}`);
  }
  return n;
}

function length(fn: string, n: unknown): number {
  if (typeof n !== "number" || !Number.isInteger(n) || n < 0) {
    throw new TypeError(
      `Invalid schema: ${fn}() expects a non-negative integer, got ${describe(n)}`,
    );
  }
  return n;
}

function base(fn: string, value: unknown, fallback: SchemaNode, kinds: string[]): SchemaNode {
  const node = value === undefined ? fallback : toSchemaNode(value, `${fn}()`);
  if (!kinds.includes(node.kind) || node.optional) {
    throw new TypeError(
      `Invalid schema: ${fn}() cannot narrow a ${
        node.optional ? "optional " : ""
      }${node.kind} schema; wrap the result in Optional() instead`,
    );
  }
  return node;
}

/**
 * A number (or the given numeric schema) that must be >= `n`.
 *
 * @param n Inclusive lower bound.
 * @param of The schema to narrow; `Number` when omitted (use `Int` for integers).
 * @returns The narrowed schema.
 * @throws {TypeError} When `n` is not a finite number or `of` is not numeric.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { Int, Min } from "@fw/runtime";
 * assert.equal(Min(0, Int).node.minimum, 0);
 * ```
 */
export function Min(n: number, of?: NumericBase): Schema<number> {
  const node = base("Min", of, NUMBER_NODE, ["number", "integer"]);
  return make({ ...node, minimum: finite("Min", n) });
}

/**
 * A number (or the given numeric schema) that must be <= `n`.
 *
 * @param n Inclusive upper bound.
 * @param of The schema to narrow; `Number` when omitted.
 * @returns The narrowed schema.
 * @throws {TypeError} When `n` is not a finite number or `of` is not numeric.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { Int, Max } from "@fw/runtime";
 * assert.equal(Max(100, Int).node.maximum, 100);
 * ```
 */
export function Max(n: number, of?: NumericBase): Schema<number> {
  const node = base("Max", of, NUMBER_NODE, ["number", "integer"]);
  return make({ ...node, maximum: finite("Max", n) });
}

/**
 * A string (or the given string schema) of at least `n` characters.
 *
 * @param n Minimum length.
 * @param of The schema to narrow; `String` when omitted.
 * @returns The narrowed schema.
 * @throws {TypeError} When `n` is not a non-negative integer or `of` is not a string schema.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { MinLength } from "@fw/runtime";
 * assert.equal(MinLength(3).node.minLength, 3);
 * ```
 */
export function MinLength(n: number, of?: StringBase): Schema<string> {
  const node = base("MinLength", of, STRING_NODE, ["string"]);
  return make({ ...node, minLength: length("MinLength", n) });
}

/**
 * A string (or the given string schema) of at most `n` characters.
 *
 * @param n Maximum length.
 * @param of The schema to narrow; `String` when omitted.
 * @returns The narrowed schema.
 * @throws {TypeError} When `n` is not a non-negative integer or `of` is not a string schema.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { Email, MaxLength } from "@fw/runtime";
 * assert.equal(MaxLength(80, Email).node.format, "email");
 * ```
 */
export function MaxLength(n: number, of?: StringBase): Schema<string> {
  const node = base("MaxLength", of, STRING_NODE, ["string"]);
  return make({ ...node, maxLength: length("MaxLength", n) });
}

/**
 * A string (or the given string schema) that must match `re`.
 *
 * Flags `g` and `y` are removed so matching never depends on `lastIndex`.
 *
 * @param re The regular expression.
 * @param of The schema to narrow; `String` when omitted.
 * @returns The narrowed schema.
 * @throws {TypeError} When `re` is not a RegExp or `of` is not a string schema.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { Pattern } from "@fw/runtime";
 * assert.equal(Pattern(/^[a-z]+$/).node.pattern?.source, "^[a-z]+$");
 * ```
 */
export function Pattern(re: RegExp, of?: StringBase): Schema<string> {
  if (!(re instanceof RegExp)) {
    throw new TypeError(`Invalid schema: Pattern() expects a RegExp, got ${describe(re)}`);
  }
  const node = base("Pattern", of, STRING_NODE, ["string"]);
  const pattern = new RegExp(re.source, re.flags.replace(/[gy]/g, ""));
  return make({ ...node, pattern });
}

/**
 * Marks a property as optional: it may be absent (or `undefined`); when present it is validated.
 *
 * @param of The schema of the value when present.
 * @returns The optional schema.
 * @throws {TypeError} When `of` is not a schema.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { Int, Optional } from "@fw/runtime";
 * assert.equal(Optional(Int).node.optional, true);
 * ```
 */
export function Optional<S extends SchemaLike>(of: S): OptionalSchema<InferSchema<S>> {
  const node = toSchemaNode(of, "Optional()");
  if (node.kind === "stream") {
    throw new TypeError("Invalid schema: Optional() cannot wrap Stream()");
  }
  return make({ ...node, optional: true }) as OptionalSchema<InferSchema<S>>;
}

/**
 * An array whose every element matches `of`.
 *
 * @param of The element schema.
 * @returns The array schema.
 * @throws {TypeError} When `of` is not a schema, or is optional or a stream.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { ArrayOf, Int } from "@fw/runtime";
 * assert.equal(ArrayOf(Int).node.items?.kind, "integer");
 * ```
 */
export function ArrayOf<S extends SchemaLike>(of: S): Schema<InferSchema<S>[]> {
  const items = toSchemaNode(of, "ArrayOf()");
  if (items.optional || items.kind === "stream") {
    throw new TypeError(
      `Invalid schema: ArrayOf() elements cannot be ${
        items.kind === "stream" ? "streams" : "optional"
      }`,
    );
  }
  return make({ kind: "array", items });
}

/** The result type of `Desc(text, S)`: the same schema, optional when `S` is. */
export type Described<S> = S extends OptionalSchema<infer T> ? OptionalSchema<Exclude<T, undefined>>
  : Schema<InferSchema<S>>;

/**
 * Adds an OpenAPI description to a schema without changing what it accepts.
 *
 * @param text The description.
 * @param of The described schema.
 * @returns The same schema carrying `description`.
 * @throws {TypeError} When `text` is not a string or `of` is not a schema.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { Desc, Uuid } from "@fw/runtime";
 * assert.equal(Desc("The user id", Uuid).node.description, "The user id");
 * ```
 */
export function Desc<S extends SchemaLike>(text: string, of: S): Described<S> {
  if (typeof text !== "string") {
    throw new TypeError(
      `Invalid schema: Desc() expects a string description, got ${describe(text)}`,
    );
  }
  return make({ ...toSchemaNode(of, "Desc()"), description: text }) as unknown as Described<S>;
}

/**
 * Marks a stream of messages of schema `of`. Used in `.body()` and `.returns()` of
 * stream endpoints; each message is validated on its own.
 *
 * @param of The message schema.
 * @returns The stream marker.
 * @throws {TypeError} When `of` is not a schema or is itself a stream.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { Stream } from "@fw/runtime";
 * assert.equal(Stream({ text: String }).node.kind, "stream");
 * ```
 */
export function Stream<S extends SchemaLike>(of: S): StreamSchema<InferSchema<S>> {
  const items = toSchemaNode(of, "Stream()");
  if (items.kind === "stream") throw new TypeError("Invalid schema: Stream() cannot wrap Stream()");
  return make({ kind: "stream", items }) as StreamSchema<InferSchema<S>>;
}

/**
 * Creates a reusable object schema. With a name, OpenAPI lists it under `components/schemas`
 * with that name and refers to it with `$ref`; without one it is inlined.
 *
 * @param name Component name (letters, digits, `.`, `_`, `-`).
 * @param fields The object's properties.
 * @returns The object schema.
 * @throws {TypeError} When the name is invalid or a field is not a schema.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { Email, schema } from "@fw/runtime";
 * const User = schema("User", { email: Email });
 * assert.equal(User.node.name, "User");
 * ```
 */
export function schema<S extends SchemaShape>(name: string, fields: S): ObjectSchema<InferShape<S>>;
/**
 * Creates a reusable anonymous object schema (inlined in OpenAPI).
 *
 * @param fields The object's properties.
 * @returns The object schema.
 */
export function schema<S extends SchemaShape>(fields: S): ObjectSchema<InferShape<S>>;
export function schema<S extends SchemaShape>(
  nameOrFields: string | S,
  maybeFields?: S,
): ObjectSchema<InferShape<S>> {
  const named = typeof nameOrFields === "string";
  const fields = named ? maybeFields : nameOrFields;
  if (named && !/^[A-Za-z0-9._-]+$/.test(nameOrFields)) {
    throw new TypeError(
      `Invalid schema name "${nameOrFields}": use letters, digits, ".", "_" or "-"`,
    );
  }
  const path = named ? nameOrFields : "schema";
  if (!isPlainObject(fields)) {
    throw new TypeError(
      `Invalid schema at "${path}": expected an object of fields, got ${describe(fields)}`,
    );
  }
  const node = toSchemaNode(fields, path);
  return make(named ? { ...node, name: nameOrFields } : node) as ObjectSchema<InferShape<S>>;
}
