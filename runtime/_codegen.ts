/**
 * Generates the source of a validator function for one schema node and input area. The code is
 * specialised to the schema (no interpretation at run time), allocates nothing on the valid path
 * beyond the output value, and builds field names only when it reports an error.
 *
 * @module
 */

import type { SchemaNode } from "./schema_types.ts";

/** The generated parts handed to `new Function`. */
export interface Generated {
  /** The function body; parameters are `K` (constants) and `F` (format helpers). */
  body: string;
  /** Constants referenced by the body as `K[i]` (regular expressions). */
  constants: unknown[];
}

/** How the root input is read. */
export type RootMode = "json" | "record" | "search";

const MAX_ERRORS = 100;

class Writer {
  readonly lines: string[] = [];
  readonly constants: unknown[] = [];
  #n = 0;
  v(prefix: string): string {
    return `${prefix}${this.#n++}`;
  }
  k(value: unknown): string {
    this.constants.push(value);
    return `K[${this.constants.length - 1}]`;
  }
  emit(line: string): void {
    this.lines.push(line);
  }
}

const str = (s: string): string => JSON.stringify(s);

function err(w: Writer, field: string, suffix: string): void {
  w.emit(
    `if ((e ??= []).length < ${MAX_ERRORS}) { const f = ${field}; e.push({ field: f, message: f + ${
      str(suffix)
    } }); }`,
  );
}

const TYPE_WORD: Record<string, string> = {
  string: "a string",
  number: "a number",
  integer: "an integer",
  boolean: "a boolean",
  array: "an array",
  object: "an object",
};

function genValue(
  w: Writer,
  node: SchemaNode,
  input: string,
  field: string,
  out: string,
  coerce: boolean,
): void {
  switch (node.kind) {
    case "string":
      return genString(w, node, input, field, out);
    case "number":
    case "integer":
      return genNumber(w, node, input, field, out, coerce);
    case "boolean":
      if (coerce) w.emit(`if (typeof ${input} === "string") ${input} = F.toBoolean(${input});`);
      w.emit(`if (typeof ${input} !== "boolean") {`);
      err(w, field, " must be a boolean");
      w.emit(`} else ${out} = ${input};`);
      return;
    case "array":
      return genArray(w, node, input, field, out, coerce);
    case "object":
      return genObject(w, node, input, field, out, coerce);
    case "stream":
      return genValue(w, node.items!, input, field, out, coerce);
  }
}

function genString(w: Writer, node: SchemaNode, v: string, field: string, out: string): void {
  w.emit(`if (typeof ${v} !== "string") {`);
  err(w, field, " must be a string");
  w.emit(`} else {`);
  const format: Record<string, [string, string]> = {
    uuid: ["F.isUuid", " must be a valid UUID"],
    email: ["F.isEmail", " must be a valid email address"],
    uri: ["F.isUrl", " must be a valid URL"],
    "date-time": ["F.isDateTime", " must be a valid ISO 8601 date-time"],
  };
  if (node.format) {
    const [fn, message] = format[node.format];
    w.emit(`if (!${fn}(${v})) {`);
    err(w, field, message);
    w.emit(`}`);
  }
  if (node.minLength !== undefined) {
    w.emit(`if (${v}.length < ${node.minLength}) {`);
    err(w, field, ` must be at least ${node.minLength} characters`);
    w.emit(`}`);
  }
  if (node.maxLength !== undefined) {
    w.emit(`if (${v}.length > ${node.maxLength}) {`);
    err(w, field, ` must be at most ${node.maxLength} characters`);
    w.emit(`}`);
  }
  if (node.pattern) {
    w.emit(`if (!${w.k(node.pattern)}.test(${v})) {`);
    err(w, field, ` must match pattern ${node.pattern.source}`);
    w.emit(`}`);
  }
  w.emit(`${out} = ${v};`);
  w.emit(`}`);
}

function genNumber(
  w: Writer,
  node: SchemaNode,
  v: string,
  field: string,
  out: string,
  coerce: boolean,
): void {
  if (coerce) w.emit(`if (typeof ${v} === "string") ${v} = F.toNumber(${v});`);
  const int = node.kind === "integer";
  w.emit(
    `if (typeof ${v} !== "number" || !${int ? "Number.isInteger" : "Number.isFinite"}(${v})) {`,
  );
  err(w, field, ` must be ${TYPE_WORD[node.kind]}`);
  w.emit(`} else {`);
  if (node.minimum !== undefined) {
    w.emit(`if (${v} < ${node.minimum}) {`);
    err(w, field, ` must be >= ${node.minimum}`);
    w.emit(`}`);
  }
  if (node.maximum !== undefined) {
    w.emit(`if (${v} > ${node.maximum}) {`);
    err(w, field, ` must be <= ${node.maximum}`);
    w.emit(`}`);
  }
  w.emit(`${out} = ${v};`);
  w.emit(`}`);
}

function genArray(
  w: Writer,
  node: SchemaNode,
  v: string,
  field: string,
  out: string,
  coerce: boolean,
): void {
  const a = w.v("a"), i = w.v("i"), x = w.v("x"), y = w.v("y");
  w.emit(`if (!Array.isArray(${v})) {`);
  err(w, field, " must be an array");
  w.emit(`} else {`);
  w.emit(`const ${a} = new Array(${v}.length);`);
  w.emit(`for (let ${i} = 0; ${i} < ${v}.length; ${i}++) {`);
  w.emit(`let ${x} = ${v}[${i}], ${y};`);
  genValue(w, node.items!, x, `(${field} + "[" + ${i} + "]")`, y, coerce);
  w.emit(`${a}[${i}] = ${y};`);
  w.emit(`}`);
  w.emit(`${out} = ${a};`);
  w.emit(`}`);
}

function genProperties(
  w: Writer,
  node: SchemaNode,
  read: (key: string) => string,
  field: string,
  obj: string,
  coerce: boolean,
): void {
  for (const [key, prop] of Object.entries(node.properties ?? {})) {
    const x = w.v("x"), y = w.v("y");
    const childField = field.startsWith('"')
      ? str(`${JSON.parse(field)}.${key}`)
      : `(${field} + ${str(`.${key}`)})`;
    w.emit(`{ let ${x} = ${read(key)}, ${y};`);
    w.emit(`if (${x} === undefined) {`);
    if (!prop.optional) err(w, childField, " is required");
    w.emit(`} else {`);
    genValue(w, prop, x, childField, y, coerce);
    w.emit(`${obj}[${str(key)}] = ${y};`);
    w.emit(`} }`);
  }
}

function ownRead(v: string): (key: string) => string {
  return (key) =>
    key in Object.prototype
      ? `(Object.hasOwn(${v}, ${str(key)}) ? ${v}[${str(key)}] : undefined)`
      : `${v}[${str(key)}]`;
}

function genObject(
  w: Writer,
  node: SchemaNode,
  v: string,
  field: string,
  out: string,
  coerce: boolean,
): void {
  const o = w.v("o");
  w.emit(`if (typeof ${v} !== "object" || ${v} === null || Array.isArray(${v})) {`);
  err(w, field, " must be an object");
  w.emit(`} else {`);
  w.emit(`const ${o} = {};`);
  genProperties(w, node, ownRead(v), field, o, coerce);
  w.emit(`${out} = ${o};`);
  w.emit(`}`);
}

/**
 * Generates a validator body.
 *
 * @param node The root node (already checked for the area's shape rules).
 * @param area The area name, used as the field prefix.
 * @param mode `json` (strict), `record` (path params, coerced) or `search` (URLSearchParams, coerced).
 * @returns The body and its constants.
 */
export function generate(node: SchemaNode, area: string, mode: RootMode): Generated {
  const w = new Writer();
  w.emit(`"use strict";`);
  w.emit(`return function validate(input) {`);
  w.emit(`let e = null, out;`);
  if (mode === "search") {
    w.emit(`let q = input;`);
    w.emit(`if (typeof q?.getAll !== "function") q = new URLSearchParams(q ?? undefined);`);
    w.emit(`const o = {};`);
    const read = (key: string): string => {
      const prop = node.properties![key];
      return prop.kind === "array"
        ? `(q.has(${str(key)}) ? q.getAll(${str(key)}) : undefined)`
        : `(q.get(${str(key)}) ?? undefined)`;
    };
    genProperties(w, node, read, str(area), "o", true);
    w.emit(`out = o;`);
  } else {
    w.emit(`let v = input;`);
    genValue(w, node, "v", str(area), "out", mode === "record");
  }
  w.emit(`return e === null ? { ok: true, value: out } : { ok: false, errors: e };`);
  w.emit(`};`);
  return { body: w.lines.join("\n"), constants: w.constants };
}

function copyValue(w: Writer, node: SchemaNode, input: string, out: string): void {
  switch (node.kind) {
    case "array": {
      const s = w.v("s"), a = w.v("a"), i = w.v("i"), y = w.v("y");
      w.emit(`const ${s} = ${input}, ${a} = new Array(${s}.length);`);
      w.emit(`for (let ${i} = 0; ${i} < ${s}.length; ${i}++) {`);
      w.emit(`let ${y};`);
      copyValue(w, node.items!, `${s}[${i}]`, y);
      w.emit(`${a}[${i}] = ${y};`);
      w.emit(`}`);
      w.emit(`${out} = ${a};`);
      return;
    }
    case "object": {
      const s = w.v("s"), o = w.v("o");
      w.emit(`const ${s} = ${input}, ${o} = {};`);
      const read = ownRead(s);
      for (const [key, prop] of Object.entries(node.properties ?? {})) {
        const x = w.v("x"), y = w.v("y");
        w.emit(`{ const ${x} = ${read(key)};`);
        w.emit(`if (${x} !== undefined) {`);
        w.emit(`let ${y};`);
        copyValue(w, prop, x, y);
        w.emit(`${o}[${str(key)}] = ${y};`);
        w.emit(`} }`);
      }
      w.emit(`${out} = ${o};`);
      return;
    }
    case "stream":
      return copyValue(w, node.items!, input, out);
    default:
      w.emit(`${out} = ${input};`);
  }
}

/**
 * Generates the body of a copier: a function that copies a value the `json`-mode validator of
 * `node` produced, without checking it (the same fresh objects and arrays, in the same key order,
 * as validating it again would give).
 *
 * @param node The root node.
 * @returns The body (its one parameter is the value) and its constants.
 */
export function generateCopy(node: SchemaNode): Generated {
  const w = new Writer();
  w.emit(`"use strict";`);
  w.emit(`return function copy(v) {`);
  w.emit(`let out;`);
  copyValue(w, node, "v", "out");
  w.emit(`return out;`);
  w.emit(`};`);
  return { body: w.lines.join("\n"), constants: w.constants };
}
