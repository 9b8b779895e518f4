/**
 * Converts schemas to JSON Schema objects in the OpenAPI 3.0.3 dialect, for the OpenAPI
 * generator and the events protocol's published schemas.
 *
 * @module
 */

import {
  DATE_TIME_PATTERN,
  EMAIL_MAX_LENGTH,
  EMAIL_PATTERN,
  URL_PATTERN,
  UUID_PATTERN,
} from "./_formats.ts";
import { toSchemaNode } from "./schema.ts";
import type { SchemaLike, SchemaNode } from "./schema_types.ts";

/** A JSON Schema object (OpenAPI 3.0.3 Schema Object). */
export type JsonSchemaObject = Record<string, unknown>;

/** Options of {@linkcode toJsonSchema}. */
export interface JsonSchemaOptions {
  /**
   * Where named schemas (`schema("Name", ...)`) are collected. When given, a named schema is
   * written there once and referenced with `$ref: "#/components/schemas/Name"`; when omitted,
   * it is inlined.
   */
  components?: Record<string, JsonSchemaObject>;
}

function isNode(value: unknown): value is SchemaNode {
  return typeof value === "object" && value !== null && !("node" in value) &&
    typeof (value as SchemaNode).kind === "string";
}

/** The pattern that states each format's rule exactly (`uri`: a necessary condition only). */
const FORMAT_PATTERNS: Record<string, string> = {
  uuid: UUID_PATTERN,
  email: EMAIL_PATTERN,
  uri: URL_PATTERN,
  "date-time": DATE_TIME_PATTERN,
};

/** What the patterns cannot say, added to the description. */
const FORMAT_NOTES: Record<string, string> = {
  uri: "An absolute URL that the WHATWG URL parser accepts.",
  "date-time": "An ISO 8601 date-time: seconds, a fraction of up to 9 digits and the zone " +
    "offset are optional (RFC 3339 requires them); the pattern is the rule.",
};

const EMAIL_EXAMPLE = "user@example.com";

function note(out: JsonSchemaObject, text: string): void {
  out.description = out.description === undefined ? text : `${out.description}\n\n${text}`;
}

/**
 * The string rules: a format's own pattern (and the email length limit), then a `Pattern()`
 * without flags as `pattern` (a second one goes in `allOf`); a pattern with flags, which OpenAPI
 * cannot carry, is stated in the description.
 */
function stringRules(node: SchemaNode, out: JsonSchemaObject): void {
  const patterns: string[] = [];
  if (node.format) {
    patterns.push(FORMAT_PATTERNS[node.format]);
    if (FORMAT_NOTES[node.format]) note(out, FORMAT_NOTES[node.format]);
    if (node.format === "email") {
      out.maxLength = Math.min(node.maxLength ?? EMAIL_MAX_LENGTH, EMAIL_MAX_LENGTH);
      // Generators (json-schema-faker in Portman and Prism) cut a long match of the pattern
      // at maxLength, which can leave an invalid address: an example gives them a valid one.
      if ((out.maxLength as number) >= EMAIL_EXAMPLE.length) out.example = EMAIL_EXAMPLE;
    }
  }
  if (node.pattern && node.pattern.flags === "") patterns.push(node.pattern.source);
  if (node.pattern && node.pattern.flags !== "") {
    note(
      out,
      `Must match the regular expression \`/${node.pattern.source}/${node.pattern.flags}\` ` +
        "(flags cannot be written in an OpenAPI pattern).",
    );
  }
  if (patterns.length > 0) out.pattern = patterns[0];
  if (patterns.length > 1) out.allOf = [{ pattern: patterns[1] }];
}

function convert(node: SchemaNode, options: JsonSchemaOptions): JsonSchemaObject {
  if (node.kind === "stream") return convert(node.items!, options);
  const components = options.components;
  if (node.name && components) {
    const { name: _name, description: _d, optional: _o, ...rest } = node;
    if (!Object.hasOwn(components, node.name)) {
      components[node.name] = {}; // reserve first: stable order, and a nested namesake differs
      components[node.name] = convert(rest as SchemaNode, options);
    } else {
      const again = JSON.stringify(convert(rest as SchemaNode, options));
      if (again !== JSON.stringify(components[node.name])) {
        throw new TypeError(`Schema name "${node.name}" is used by two different schemas`);
      }
    }
    const ref = { $ref: `#/components/schemas/${node.name}` };
    return node.description ? { allOf: [ref], description: node.description } : ref;
  }
  const out: JsonSchemaObject = { type: node.kind };
  if (node.format) out.format = node.format;
  if (node.description !== undefined) out.description = node.description;
  if (node.minimum !== undefined) out.minimum = node.minimum;
  if (node.maximum !== undefined) out.maximum = node.maximum;
  if (node.minLength !== undefined) out.minLength = node.minLength;
  if (node.maxLength !== undefined) out.maxLength = node.maxLength;
  if (node.kind === "string") stringRules(node, out);
  if (node.kind === "array") out.items = convert(node.items!, options);
  if (node.kind === "object") {
    const properties: Record<string, JsonSchemaObject> = {};
    const required: string[] = [];
    for (const [key, prop] of Object.entries(node.properties ?? {})) {
      properties[key] = convert(prop, options);
      if (!prop.optional) required.push(key);
    }
    out.properties = properties;
    if (required.length) out.required = required;
  }
  return out;
}

/**
 * Converts a schema (or an already normalised node) to an OpenAPI 3.0.3 schema object.
 * Property order follows the declaration; `required` is omitted when empty; `Stream(T)` becomes
 * the schema of `T`; `type: "null"` is never emitted. Formats carry the `pattern` the validator
 * applies (`Uuid`, `Email` with `maxLength: 254`, `DateIso` with its calendar; `Url` its scheme
 * and a description), so that what the schema allows is what the validator accepts. A name already in `components` must
 * describe the same schema.
 *
 * @param schema The schema.
 * @param options Where named schemas are collected.
 * @returns The schema object.
 * @throws {TypeError} When `schema` is not a schema, or when a component name is already taken
 *   by a different schema.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { Int, Min, MinLength, Optional, schema } from "@fw/runtime";
 * import { toJsonSchema } from "@fw/runtime/json-schema";
 * const User = schema("User", { name: MinLength(1), age: Optional(Min(0, Int)) });
 * const components = {};
 * assert.deepEqual(toJsonSchema({ user: User }, { components }), {
 *   type: "object",
 *   properties: { user: { $ref: "#/components/schemas/User" } },
 *   required: ["user"],
 * });
 * assert.deepEqual(components, {
 *   User: {
 *     type: "object",
 *     properties: { name: { type: "string", minLength: 1 }, age: { type: "integer", minimum: 0 } },
 *     required: ["name"],
 *   },
 * });
 * ```
 */
export function toJsonSchema(
  schema: SchemaLike | SchemaNode,
  options: JsonSchemaOptions = {},
): JsonSchemaObject {
  return convert(isNode(schema) ? schema : toSchemaNode(schema), options);
}
