/**
 * The OpenAPI 3.0.3 generator: route metadata in, one deterministic
 * document out. `api().openapi()` calls it at run time; `api({ openapi })` serves its output and
 * `generate` writes it to `.gen/openapi.json`.
 *
 * What each declaration becomes:
 *
 * - paths use `{name}` templates; a catch-all `[...path]` is the parameter `{path}`;
 * - `.params()` and `.query()` become parameters (path parameters are always required; a path
 *   parameter without a schema is a string), with formats, constraints and `Desc` descriptions;
 * - `.body()` becomes a required `application/json` request body;
 * - `schema("Name", ...)` schemas are listed once under `components/schemas` and referred to;
 *   two different schemas with one name are an error;
 * - `.returns()` is the primary response (status 200 unless given; a `String` schema is
 *   `text/plain`); with no `.returns()` and no other success response, `2XX` is documented;
 * - `.response()` adds a response; `.mayThrow()` codes become their status with the
 *   `ErrorResponse` envelope `{statusCode, message, error}`;
 * - every operation documents 400 (`ValidationErrorResponse`, `{message, errors: [{field,
 *   message}]}`, `oneOf` with the envelope where a path parameter or the route may answer with
 *   it) and 500; routes with a JSON body also 413 (stating the limit) and 415; routes whose object
 *   or array result is negotiated list its formats and 406; `.secure()` routes 401 with
 *   `WWW-Authenticate` (403 when scopes, roles or a guard apply; 503 when the keys cannot be
 *   fetched); `.rateLimit()` routes 429 with `Retry-After` and `RateLimit-*` on every response;
 * - `api().throws()` and then `.throws()` replace any entry of the same status (without a schema
 *   the body is the error envelope);
 * - `.description()` is the operation description; `.secure()` adds the `bearerAuth` (HTTP
 *   bearer, JWT) requirement and lists its scopes and roles in the description;
 * - stream endpoints document `200` as `text/event-stream` (server streams) and `101` for the
 *   WebSocket upgrade, with mode, transports and message schemas in `x-fw-stream`.
 *
 * Paths, methods, responses, components and tags are sorted and operation ids are derived from
 * the method and path (`getUsersById`), so the same routes always give the same bytes.
 *
 * @module
 */

import type { JsonSchemaObject, SchemaNode } from "@fw/runtime";
import { toJsonSchema } from "@fw/runtime/json-schema";
import type {
  OpenApiDocument,
  OpenApiDocumentOptions,
  OpenApiOperation,
  OpenApiRoute,
} from "./types.ts";
import { checkOpenApiOptions, generator } from "./_config.ts";

export type { OpenApiDocumentOptions } from "./types.ts";
import { BEARER_SCHEME, type DraftOperation, operationOf } from "./_operation.ts";
import { ERROR_COMPONENTS } from "./_responses.ts";

const METHOD_ORDER = ["get", "put", "post", "delete", "options", "head", "patch", "trace"];

const byText = (a: string, b: string): number => (a < b ? -1 : a > b ? 1 : 0);

function sortedObject<T>(entries: Iterable<[string, T]>): Record<string, T> {
  return Object.fromEntries([...entries].sort(([a], [b]) => byText(a, b)));
}

function draftOf(
  route: OpenApiRoute,
  options: OpenApiDocumentOptions,
  write: (node: SchemaNode) => JsonSchemaObject,
): DraftOperation {
  try {
    const { prefix = "", globalThrows = [], maxBodyBytes } = options;
    return operationOf(route, prefix, globalThrows, write, maxBodyBytes);
  } catch (error) {
    const source = route.source ? ` (${route.source})` : "";
    throw new TypeError(
      `Cannot document route "${route.method} ${route.path}"${source}: ${(error as Error).message}`,
      { cause: error },
    );
  }
}

/**
 * Builds the OpenAPI 3.0.3 document of a set of routes.
 *
 * @param routes The routes (`api().routes`, or your own list).
 * @param options Info, servers, global throws and the prefix.
 * @returns A new document; serialise it with `JSON.stringify`.
 * @throws {TypeError} For invalid options, for `.params()` naming a parameter the path lacks, and
 *   for two different schemas sharing one component name (the message names the route).
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { endpoint, Int, schema } from "@fw/application";
 * import { openApiDocument } from "@fw/application/openapi";
 *
 * const User = schema("User", { id: Int, name: String });
 * const doc = openApiDocument([{
 *   method: "GET",
 *   path: "/users/:id",
 *   definition: endpoint().params({ id: Int }).returns(User).mayThrow("NotFound")
 *     .handle((ctx) => ({ id: ctx.params.id, name: "Ada" })),
 * }], { info: { title: "Users", version: "1.0.0" } });
 *
 * const op = doc.paths["/users/{id}"].get;
 * assert.equal(op.operationId, "getUsersById");
 * assert.deepEqual(Object.keys(op.responses), ["200", "400", "404", "406", "500"]);
 * assert.deepEqual(doc.components.schemas.User.required, ["id", "name"]);
 * ```
 */
export function openApiDocument(
  routes: readonly OpenApiRoute[],
  options: OpenApiDocumentOptions,
): OpenApiDocument {
  const { info, servers } = checkOpenApiOptions(options, "openApiDocument()");
  const schemas: Record<string, JsonSchemaObject> = structuredClone(ERROR_COMPONENTS);
  const write = (node: SchemaNode) => toJsonSchema(node, { components: schemas });
  const drafts = routes.map((route) => draftOf(route, options, write)).sort((a, b) =>
    byText(a.path, b.path) || METHOD_ORDER.indexOf(a.method) - METHOD_ORDER.indexOf(b.method)
  );

  const used = new Set<string>();
  const paths: Record<string, Record<string, OpenApiOperation>> = {};
  const tags = new Set<string>();
  let secure = false;
  for (const draft of drafts) {
    let operationId = draft.idBase;
    for (let n = 2; used.has(operationId); n++) operationId = `${draft.idBase}${n}`;
    used.add(operationId);
    (paths[draft.path] ??= {})[draft.method] = { operationId, ...draft.operation };
    for (const tag of draft.operation.tags ?? []) tags.add(tag);
    secure ||= draft.operation.security !== undefined;
  }
  return {
    openapi: "3.0.3",
    info,
    ...(servers && { servers }),
    ...(tags.size > 0 && { tags: [...tags].sort(byText).map((name) => ({ name })) }),
    paths,
    components: {
      schemas: sortedObject(Object.entries(schemas)),
      ...(secure && {
        securitySchemes: {
          [BEARER_SCHEME]: {
            type: "http",
            scheme: "bearer",
            bearerFormat: "JWT",
            description: "A JWT access token: `Authorization: Bearer <token>`",
          },
        },
      }),
    },
  };
}

// api() builds its documents through this part (it loads this module only when it needs it)
generator.install(openApiDocument);
