/**
 * Checks an OpenAPI document the way tools will read it: the offline validator of
 * `@seriousme/openapi-schema-validator` (the OpenAPI 3.0 JSON schema, plus `$ref` resolution),
 * then fw's own semantic rules, which the JSON schema cannot express.
 *
 * @module
 */

import { Validator } from "@seriousme/openapi-schema-validator";

/**
 * Validates a document against the OpenAPI 3.0 schema.
 *
 * @param document The document.
 * @returns The validator's error messages (empty when valid).
 */
export async function schemaErrors(document: unknown): Promise<string[]> {
  const validator = new Validator();
  const result = await validator.validate(structuredClone(document) as Record<string, unknown>);
  if (result.valid) return [];
  if (!Array.isArray(result.errors)) return [String(result.errors)];
  return result.errors.map((e) =>
    `${e.instancePath || "/"} ${e.message ?? e.keyword} ${JSON.stringify(e.params ?? {})}`
  );
}

type Json = Record<string, unknown>;

function* walk(value: unknown, at: string): Generator<[string, Json]> {
  if (Array.isArray(value)) {
    for (const [i, v] of value.entries()) yield* walk(v, `${at}/${i}`);
  } else if (typeof value === "object" && value !== null) {
    yield [at, value as Json];
    for (const [k, v] of Object.entries(value)) yield* walk(v, `${at}/${k.replaceAll("/", "~1")}`);
  }
}

/**
 * fw's semantic rules: every path parameter is declared, in the path and required (and every
 * declared path parameter is in the path); operation ids are unique; every response has a
 * description; no `type: "null"`; no empty `required` list.
 *
 * @param document The document.
 * @returns One message per problem (empty when there is none).
 */
export function semanticProblems(document: unknown): string[] {
  const problems: string[] = [];
  const doc = document as { paths?: Record<string, Record<string, Json>> };
  const ids = new Map<string, string>();
  for (const [path, item] of Object.entries(doc.paths ?? {})) {
    const inPath = [...path.matchAll(/\{([^}]+)\}/g)].map((m) => m[1]);
    for (const [method, op] of Object.entries(item)) {
      const where = `${method.toUpperCase()} ${path}`;
      const params = (op.parameters ?? []) as { name: string; in: string; required?: boolean }[];
      for (const name of inPath) {
        const p = params.find((x) => x.in === "path" && x.name === name);
        if (!p) problems.push(`${where}: path parameter "${name}" is not declared`);
        else if (p.required !== true) {
          problems.push(`${where}: path parameter "${name}" is optional`);
        }
      }
      for (const p of params) {
        if (p.in === "path" && !inPath.includes(p.name)) {
          problems.push(`${where}: path parameter "${p.name}" is not in the path`);
        }
      }
      const id = op.operationId;
      if (typeof id !== "string" || id === "") problems.push(`${where}: no operationId`);
      else if (ids.has(id)) problems.push(`${where}: operationId "${id}" is also ${ids.get(id)}`);
      else ids.set(id, where);
      const responses = (op.responses ?? {}) as Record<string, { description?: unknown }>;
      if (Object.keys(responses).length === 0) problems.push(`${where}: no responses`);
      for (const [status, r] of Object.entries(responses)) {
        if (typeof r.description !== "string" || r.description.trim() === "") {
          problems.push(`${where}: response ${status} has no description`);
        }
      }
    }
  }
  for (const [at, node] of walk(document, "")) {
    if (node.type === "null" || (Array.isArray(node.type) && node.type.includes("null"))) {
      problems.push(`${at}: type "null"`);
    }
    if (Array.isArray(node.required) && node.required.length === 0) {
      problems.push(`${at}: empty required list`);
    }
  }
  return problems;
}
