/**
 * Shared by the OpenAPI generator tests: a document from `[method, path, definition]` triples,
 * one operation of it, and the response entries fw always writes.
 *
 * @module
 */

import type { EndpointDefinition, OpenApiDocument, OpenApiOperation } from "../mod.ts";
import { openApiDocument } from "../openapi/document.ts";

/** The info every test document carries. */
export const info = { title: "Shapes", version: "2.0.0" };
/** `$ref` of the error envelope. */
export const ERROR = { $ref: "#/components/schemas/ErrorResponse" };
/** `$ref` of the validation body. */
export const VALIDATION = { $ref: "#/components/schemas/ValidationErrorResponse" };
/** An `application/json` content map. */
export const json = (schema: unknown): Record<string, { schema: unknown }> => ({
  "application/json": { schema },
});
/** The 400 every operation documents. */
export const R400 = { description: "Validation failed", content: json(VALIDATION) };
/** The 500 every operation documents. */
export const R500 = { description: "Internal Server Error", content: json(ERROR) };
/** The 406 of a route whose result is negotiated. */
export const R406 = {
  description: "Not Acceptable: no format the route produces matches `Accept`",
  content: json(ERROR),
};
/** The 400 of a route with path parameters: validation, or a malformed parameter. */
export const R400_PATH = {
  description: "Bad Request: validation failed, or the request was rejected",
  content: json({ oneOf: [VALIDATION, ERROR] }),
};
/** The content of a negotiated result: JSON, and YAML, XML or HTML by `Accept`. */
export const negotiated = (schema: unknown): Record<string, { schema: unknown }> => ({
  ...json(schema),
  ...Object.fromEntries(
    ["text/plain", "text/html", "application/xml", "application/yaml", "text/yaml"].map((t) => [
      t,
      { schema: { type: "string" } },
    ]),
  ),
});
/** What the description of a negotiated result adds. */
export const NEGOTIATION_NOTE = ". The body is JSON unless `Accept` asks for YAML (`text/plain`, " +
  "`application/yaml`, `text/yaml`), XML (`application/xml`, `text/xml`) or HTML (`text/html`).";
/** The success entry of a route without a declared response. */
export const R2XX = { description: "Success (no response schema declared)" };
/** An error response with the envelope. */
export const error = (description: string): { description: string; content: object } => ({
  description,
  content: json(ERROR),
});

/** A route as a triple. */
export type Route = [method: string, path: string, definition: EndpointDefinition];

/** The document of some routes. */
export function documentOf(routes: Route[], extra: object = {}): OpenApiDocument {
  return openApiDocument(
    routes.map(([method, path, definition]) => ({ method, path, definition })),
    { info, ...extra },
  );
}

/** The document of one route, and its operation. */
export function operationOf(
  definition: EndpointDefinition,
  method = "GET",
  path = "/x",
): { doc: OpenApiDocument; op: OpenApiOperation } {
  const doc = documentOf([[method, path, definition]]);
  const template = path.replace(/[:*](\w+)/g, "{$1}");
  return { doc, op: doc.paths[template][method.toLowerCase()] };
}

/** A handler that does nothing (the generator never calls it). */
export const handler = (): void => {};
