/**
 * Type-level half of the schema vocabulary: the node shape every schema compiles from and the
 * `InferSchema` mapping from a schema to its static type.
 *
 * @module
 */

/** The JSON type a schema node accepts. */
export type SchemaKind =
  | "string"
  | "number"
  | "integer"
  | "boolean"
  | "array"
  | "object"
  | "stream";

/** String formats understood by the validator and written to OpenAPI `format`. */
export type SchemaFormat = "uuid" | "email" | "uri" | "date-time";

/**
 * The normalised description of one schema position. Every value of the vocabulary (`Uuid`,
 * `Min(0)`, `ArrayOf(Int)`, a nested plain object...) is turned into a `SchemaNode` once, when the
 * schema is built. The compiler and the OpenAPI generator read only this shape.
 */
export interface SchemaNode {
  /** JSON type accepted at this position. */
  readonly kind: SchemaKind;
  /** String format (`uuid`, `email`, `uri`, `date-time`). */
  readonly format?: SchemaFormat;
  /** Inclusive lower bound for numbers. */
  readonly minimum?: number;
  /** Inclusive upper bound for numbers. */
  readonly maximum?: number;
  /** Minimum string length in UTF-16 code units. */
  readonly minLength?: number;
  /** Maximum string length in UTF-16 code units. */
  readonly maxLength?: number;
  /** Regular expression a string must match. */
  readonly pattern?: RegExp;
  /** True when the property may be absent. */
  readonly optional?: boolean;
  /** OpenAPI description added by `Desc`. */
  readonly description?: string;
  /** Element schema for `array` and `stream`. */
  readonly items?: SchemaNode;
  /** Property schemas for `object`, in declaration order. */
  readonly properties?: Readonly<Record<string, SchemaNode>>;
  /** Component name for schemas created with `schema(name, fields)`. */
  readonly name?: string;
}

/**
 * A schema value of the vocabulary. `T` is the static type it validates to; the runtime payload is
 * the normalised {@linkcode SchemaNode}.
 */
export interface Schema<T> {
  /** Phantom field carrying the static type; never present at run time. */
  readonly "~type"?: T;
  /** The normalised node. */
  readonly node: SchemaNode;
}

/** A schema value wrapped by `Optional`: its property may be absent. */
export interface OptionalSchema<T> extends Schema<T | undefined> {
  /** Phantom marker read by {@linkcode InferSchema} (type level only; absent at run time). */
  readonly "~optional": true;
}

/** A `Stream(T)` marker: a stream of messages of type `T`. */
export interface StreamSchema<T> extends Schema<AsyncIterable<T>> {
  /** Phantom field carrying the message type. */
  readonly "~type"?: AsyncIterable<T>;
  /** Always `"stream"`. */
  readonly node: SchemaNode & { readonly kind: "stream" };
}

/** A named schema made with `schema()`: an object schema that OpenAPI lists under components. */
export interface ObjectSchema<T> extends Schema<T> {
  /** Always `"object"`. */
  readonly node: SchemaNode & { readonly kind: "object" };
}

/** Anything accepted where a schema is expected. */
export type SchemaLike =
  | StringConstructor
  | NumberConstructor
  | BooleanConstructor
  | Schema<unknown>
  | SchemaShape;

/** A plain object of schemas: the form of `.body({...})`, `topic(name, {...})` and nested fields. */
export interface SchemaShape {
  /** Each property maps a field name to its schema. */
  readonly [key: string]: SchemaLike;
}

/** Flattens an intersection into one object type (for readable hovers). */
export type Simplify<T> = { [K in keyof T]: T[K] } & unknown;

/** The keys of a shape whose schema is wrapped in `Optional`. */
export type OptionalKeys<S> = {
  [K in keyof S]: S[K] extends OptionalSchema<unknown> ? K : never;
}[keyof S];

/** The keys of a shape that must be present. */
export type RequiredKeys<S> = Exclude<keyof S, OptionalKeys<S>>;

/** Static type of an object shape: optional fields become optional properties. */
export type InferShape<S> = Simplify<
  & { -readonly [K in RequiredKeys<S>]: InferSchema<S[K]> }
  & { -readonly [K in OptionalKeys<S>]?: InferSchema<S[K]> }
>;

/**
 * The static type a schema validates to.
 *
 * @example Deriving a type from a named schema
 * ```ts
 * import { type InferSchema, Int, Optional, schema } from "@fw/runtime";
 * const User = schema("User", { name: String, age: Optional(Int) });
 * const user: InferSchema<typeof User> = { name: "Ada" };
 * console.log(user.name);
 * ```
 */
export type InferSchema<S> = S extends StringConstructor ? string
  : S extends NumberConstructor ? number
  : S extends BooleanConstructor ? boolean
  : S extends OptionalSchema<infer T> ? Exclude<T, undefined>
  : S extends Schema<infer T> ? T
  : S extends SchemaShape ? InferShape<S>
  : never;
