/**
 * A small JSON Schema (draft 2020-12) checker for the protocol's own schemas: `type`, `const`,
 * `enum`, `properties`, `required`, `additionalProperties`, `items`, `minLength`, `maxLength`,
 * `pattern`, `minimum`, `maximum`, `oneOf` and `$ref` to a sibling schema by file name. It is
 * what the Event Server checks incoming frames with and what the conformance runner checks a
 * server's frames with, so both read the published schemas rather than a copy. Internal.
 *
 * @module
 */

/** One problem found: a dotted path (`errors[0].field`) and what is wrong there. */
export interface SchemaIssue {
  /** Where, as a dotted path from the value's root name. */
  readonly field: string;
  /** What is wrong, for example `must be a string`. */
  readonly message: string;
}

/** A JSON Schema object. */
export type JsonSchema = Readonly<Record<string, unknown>>;

/** Resolves a `$ref` (a sibling file name such as `event.json`) to its schema. */
export type SchemaResolver = (ref: string) => JsonSchema | undefined;

const MAX_ISSUES = 20;

function typeOf(value: unknown): string {
  if (value === null) return "null";
  if (Array.isArray(value)) return "array";
  if (typeof value === "number") return Number.isInteger(value) ? "integer" : "number";
  return typeof value;
}

function typeMatches(want: string, value: unknown): boolean {
  const actual = typeOf(value);
  return want === actual || (want === "number" && actual === "integer");
}

function article(type: string): string {
  return /^[aeiou]/.test(type) ? `an ${type}` : `a ${type}`;
}

function join(path: string, key: string | number): string {
  if (typeof key === "number") return `${path}[${key}]`;
  return path === "" ? key : `${path}.${key}`;
}

const patterns = new Map<string, RegExp>();

function regex(source: string): RegExp {
  let r = patterns.get(source);
  if (!r) patterns.set(source, r = new RegExp(source, "u"));
  return r;
}

/**
 * Checks `value` against `schema`.
 *
 * @param schema The schema.
 * @param value The value.
 * @param resolve Resolves `$ref`s.
 * @param root The name of the value's root in issue paths.
 * @returns The issues found (empty when the value is valid), at most 20.
 */
export function checkSchema(
  schema: JsonSchema,
  value: unknown,
  resolve: SchemaResolver,
  root = "",
): SchemaIssue[] {
  const issues: SchemaIssue[] = [];
  walk(schema, value, root, resolve, issues);
  return issues;
}

function walk(
  schema: JsonSchema,
  value: unknown,
  path: string,
  resolve: SchemaResolver,
  out: SchemaIssue[],
): void {
  if (out.length >= MAX_ISSUES) return;
  const at = path === "" ? "value" : path;
  const add = (message: string) => void out.push({ field: at, message });
  if (typeof schema.$ref === "string") {
    const target = resolve(schema.$ref);
    if (!target) return add(`refers to an unknown schema "${schema.$ref}"`);
    walk(target, value, path, resolve, out);
  }
  if ("const" in schema && JSON.stringify(schema.const) !== JSON.stringify(value)) {
    return add(`must be ${JSON.stringify(schema.const)}`);
  }
  if (Array.isArray(schema.enum) && !schema.enum.some((e) => e === value)) {
    return add(`must be one of ${schema.enum.map((e) => JSON.stringify(e)).join(", ")}`);
  }
  if (schema.type !== undefined) {
    const types = Array.isArray(schema.type) ? schema.type as string[] : [schema.type as string];
    if (!types.some((t) => typeMatches(t, value))) {
      return add(`must be ${types.map(article).join(" or ")}`);
    }
  }
  if (Array.isArray(schema.oneOf)) {
    const matching = (schema.oneOf as JsonSchema[]).filter((s) =>
      checkSchema(s, value, resolve, path).length === 0
    );
    if (matching.length !== 1) {
      return add(
        matching.length === 0
          ? "must match one of the allowed shapes"
          : "matches more than one of the allowed shapes",
      );
    }
  }
  if (typeof value === "string") {
    const length = [...value].length;
    if (typeof schema.minLength === "number" && length < schema.minLength) {
      add(`must be at least ${schema.minLength} characters`);
    }
    if (typeof schema.maxLength === "number" && length > schema.maxLength) {
      add(`must be at most ${schema.maxLength} characters`);
    }
    if (typeof schema.pattern === "string" && !regex(schema.pattern).test(value)) {
      add(`must match pattern ${schema.pattern}`);
    }
  } else if (typeof value === "number") {
    if (typeof schema.minimum === "number" && value < schema.minimum) {
      add(`must be >= ${schema.minimum}`);
    }
    if (typeof schema.maximum === "number" && value > schema.maximum) {
      add(`must be <= ${schema.maximum}`);
    }
  } else if (Array.isArray(value)) {
    if (typeof schema.items === "object" && schema.items !== null) {
      value.forEach((item, i) =>
        walk(schema.items as JsonSchema, item, join(path, i), resolve, out)
      );
    }
  } else if (typeof value === "object" && value !== null) {
    const object = value as Record<string, unknown>;
    const properties = (schema.properties ?? {}) as Record<string, JsonSchema>;
    for (const key of (schema.required ?? []) as string[]) {
      if (!Object.hasOwn(object, key)) out.push({ field: join(path, key), message: "is required" });
    }
    for (const key of Object.keys(object)) {
      const field = join(path, key);
      if (Object.hasOwn(properties, key)) walk(properties[key], object[key], field, resolve, out);
      else if (schema.additionalProperties === false) {
        out.push({ field, message: "is not allowed" });
      } else if (typeof schema.additionalProperties === "object") {
        walk(schema.additionalProperties as JsonSchema, object[key], field, resolve, out);
      }
    }
  }
}
