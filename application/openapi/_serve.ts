/**
 * The handlers of what `api({ openapi })` serves: the JSON document and, with `docs`, the
 * Swagger UI page and its files, one for each path of `openApiPaths()`. `api()` registers those
 * paths at warmup and imports this module (and with it the generator) then in development, where
 * it builds the document at once, and on the first request for one of them in production, so a
 * production start-up loads neither. The page's module (and the npm package it reads) is loaded
 * on the first request for the page or one of its files.
 *
 * @module
 */

import { JSON_TYPE } from "../_errors.ts";
import type { RouteHandler } from "@fw/runtime";
import { DOCS_FILES, type ResolvedOpenApiConfig } from "./_config.ts";
import type { OpenApiDocument } from "./types.ts";
// the generator comes with this module: api() builds the document it serves through its hook
import "./document.ts";

/**
 * The handlers of the OpenAPI routes by path (the paths of `openApiPaths()`).
 *
 * @param prefix The plugin's prefix.
 * @param config The checked configuration (with a `path`).
 * @param document The document to serve, or a function that builds it on the first request for
 *   it (its JSON text is then kept).
 * @returns A handler for each path.
 */
export function openApiHandlers(
  prefix: string,
  config: ResolvedOpenApiConfig,
  document: OpenApiDocument | (() => OpenApiDocument),
): Map<string, RouteHandler> {
  const specPath = prefix + config.path;
  const text = () =>
    JSON.stringify(typeof document === "function" ? document() : document, null, 2);
  let json = typeof document === "function" ? undefined : text() + "\n";
  const handlers = new Map<string, RouteHandler>([[
    specPath,
    () =>
      new Response(json ??= text() + "\n", {
        headers: {
          "content-type": JSON_TYPE,
          "cache-control": "no-cache",
        },
      }),
  ]]);
  if (config.docs === undefined) return handlers;
  // The page's module loads on the first request for one of its paths: these handlers stand
  // for those `docsRoutes()` makes (the same paths) and hand each request on.
  const path = prefix + config.docs;
  const options = {
    path,
    specUrl: specPath,
    title: config.options.info.title,
    servers: config.options.servers?.map((s) => s.url) ?? [],
  };
  let page: Promise<Map<string, RouteHandler>> | undefined;
  const load = () =>
    page ??= import("./_docs.ts").then(({ docsRoutes }) =>
      new Map(docsRoutes(options).map((r) => [r.path, r.handler]))
    );
  for (const p of DOCS_FILES.map((file) => file ? `${path}/${file}` : path)) {
    handlers.set(p, (...args) => load().then((m) => m.get(p)!(...args)));
  }
  return handlers;
}
