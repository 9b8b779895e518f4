/**
 * The schema compiler: turns a schema into a specialised validator function once, so that
 * validating a request or a message costs about as much as hand-written checks.
 *
 * Areas decide how input is read and named:
 *
 * | area | input | coercion |
 * | --- | --- | --- |
 * | `params` | `Record<string, string>` (decoded path params) | strings to numbers, integers, booleans |
 * | `query` | `URLSearchParams` or a `QueryString` (a string or record is converted) | as `params`; `ArrayOf(T)` takes every value of a repeated key, a scalar the first |
 * | `body`, `payload`, `message`, `response` | parsed JSON | none: types must match exactly |
 *
 * Error fields are the area plus a dotted path (`body.items[1].sku`); messages follow the
 * documented forms. All errors are reported in schema order, up to 100. Unknown properties are
 * dropped from the validated value. A validator never throws.
 *
 * @module
 */

import * as formats from "./_formats.ts";
import { generate, generateCopy, type RootMode } from "./_codegen.ts";
import type { ValidationIssue } from "./exceptions.ts";
import { toSchemaNode } from "./schema.ts";
import type { InferSchema, SchemaLike, SchemaNode } from "./schema_types.ts";

/** Where validated input comes from; also the prefix of every error field. */
export type InputArea = "params" | "query" | "body" | "payload" | "message" | "response";

/** The outcome of one validation. */
export type ValidationResult<T> =
  | { ok: true; value: T }
  | { ok: false; errors: ValidationIssue[] };

/** A compiled validator: never throws, returns the cleaned value or the issues. */
export type Validator<T> = (input: unknown) => ValidationResult<T>;

const AREAS: ReadonlySet<string> = new Set([
  "params",
  "query",
  "body",
  "payload",
  "message",
  "response",
]);

const cache = new WeakMap<object, Map<string, Validator<unknown>>>();

/** A function that copies a value its validator produced, without checking it again. */
export type Copier<T> = (value: T) => T;

/** The schema node of each compiled validator whose values can be copied (`json` areas). */
const copyable = new WeakMap<Validator<unknown>, SchemaNode>();
const copiers = new WeakMap<Validator<unknown>, Copier<unknown>>();

function checkFlat(node: SchemaNode, area: string): void {
  if (node.kind !== "object") {
    throw new TypeError(`Invalid schema at "${area}": ${area} schemas must be an object of fields`);
  }
  for (const [key, prop] of Object.entries(node.properties ?? {})) {
    const scalar = (n: SchemaNode) =>
      n.kind === "string" || n.kind === "number" || n.kind === "integer" || n.kind === "boolean";
    const ok = scalar(prop) || (area === "query" && prop.kind === "array" && scalar(prop.items!));
    if (!ok) {
      throw new TypeError(
        `Invalid schema at "${area}.${key}": ${area} fields must be ${
          area === "query" ? "scalars or ArrayOf(scalar)" : "scalars"
        }, got ${prop.kind}`,
      );
    }
  }
}

function build(node: SchemaNode, area: InputArea): Validator<unknown> {
  if (node.kind === "stream") node = node.items!;
  let mode: RootMode = "json";
  if (area === "params" || area === "query") {
    checkFlat(node, area);
    mode = area === "query" ? "search" : "record";
  }
  // The checks above run now, so a broken schema fails where it is declared; the code is
  // generated on the first call, so start-up pays only for the validators a request uses.
  let run: Validator<unknown> | undefined;
  const validator: Validator<unknown> = (input) =>
    (run ??= generateValidator(node, area, mode))(input);
  if (mode === "json") copyable.set(validator, node);
  return validator;
}

function generateValidator(node: SchemaNode, area: InputArea, mode: RootMode): Validator<unknown> {
  const { body, constants } = generate(node, area, mode);
  return new Function("K", "F", body)(constants, formats) as Validator<unknown>;
}

/**
 * Compiles a schema for one input area. The result is cached: compiling the same schema value for
 * the same area again returns the same function.
 *
 * @param schema Any schema value (a shape object, `schema()`, `Stream(T)` for its messages...).
 * @param area The input area (decides coercion and the field prefix).
 * @returns The validator.
 * @throws {TypeError} When the schema is invalid, the area unknown, or a `params`/`query` schema
 *   is not a flat object.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { compile, Email, Int, Min, Optional } from "@fw/runtime";
 * const validate = compile({ email: Email, age: Optional(Min(0, Int)) }, "body");
 * assert.deepEqual(validate({ email: "ada@example.com", admin: true }), {
 *   ok: true,
 *   value: { email: "ada@example.com" },
 * });
 * assert.deepEqual(validate({ email: "nope", age: -1 }), {
 *   ok: false,
 *   errors: [
 *     { field: "body.email", message: "body.email must be a valid email address" },
 *     { field: "body.age", message: "body.age must be >= 0" },
 *   ],
 * });
 * const query = compile({ limit: Int }, "query");
 * assert.deepEqual(query(new URLSearchParams("limit=10")), { ok: true, value: { limit: 10 } });
 * ```
 */
export function compile<S extends SchemaLike>(
  schema: S,
  area: InputArea,
): Validator<InferSchema<S>> {
  if (!AREAS.has(area)) {
    throw new TypeError(
      `Invalid input area "${area}": use params, query, body, payload, message or response`,
    );
  }
  const key = typeof schema === "object" || typeof schema === "function" ? schema as object : null;
  let byArea = key ? cache.get(key) : undefined;
  const hit = byArea?.get(area);
  if (hit) return hit as Validator<InferSchema<S>>;
  const validator = build(toSchemaNode(schema, area), area);
  if (key) {
    if (!byArea) cache.set(key, byArea = new Map());
    byArea.set(area, validator);
  }
  return validator as Validator<InferSchema<S>>;
}

/**
 * Joins the messages of several issues with `"; "` (the `message` of a 400 body).
 *
 * @param errors The issues.
 * @returns One line.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { joinMessages } from "@fw/runtime";
 * assert.equal(
 *   joinMessages([{ field: "a", message: "a is required" }, { field: "b", message: "b is required" }]),
 *   "a is required; b is required",
 * );
 * ```
 */
export function joinMessages(errors: readonly ValidationIssue[]): string {
  let out = "";
  for (let i = 0; i < errors.length; i++) out += (i ? "; " : "") + errors[i].message;
  return out;
}

/**
 * The copier of a validator made by {@linkcode compile} for a JSON area (`body`, `payload`,
 * `message`, `response`): a function that copies a value that validator returned, without
 * checking it. It gives what validating the value again would give (fresh objects and arrays with
 * the same keys in the same order, the same strings, numbers and booleans) at a fraction of the
 * cost, for code that hands one validated value to several consumers and must give each its own
 * copy. Pass it only values the validator returned and nobody changed since.
 *
 * @param validator A validator returned by `compile()`.
 * @returns The copier (generated once per validator), or `undefined` for a validator that
 *   `compile()` did not make or that reads `params` or `query`.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { ArrayOf, compile, copierOf, Int } from "@fw/runtime";
 * const validate = compile({ n: Int, tags: ArrayOf(String) }, "payload");
 * const checked = validate({ n: 1, tags: ["a"], extra: true });
 * assert.ok(checked.ok);
 * const copy = copierOf(validate)!(checked.value);
 * assert.deepEqual(copy, { n: 1, tags: ["a"] });
 * assert.notEqual(copy.tags, checked.value.tags);
 * assert.equal(copierOf((x: unknown) => ({ ok: true, value: x })), undefined);
 * ```
 */
export function copierOf<T>(validator: Validator<T>): Copier<T> | undefined {
  const v = validator as Validator<unknown>;
  let copier = copiers.get(v);
  if (copier === undefined) {
    const node = copyable.get(v);
    if (node === undefined) return undefined;
    const { body, constants } = generateCopy(node);
    copier = new Function("K", body)(constants) as Copier<unknown>;
    copiers.set(v, copier);
  }
  return copier as Copier<T>;
}
