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
import { openApiPaths, type ResolvedOpenApiConfig } from "./_config.ts";
import { handlersOnDemand } from "../_late.ts";
import type { OpenApiDocument } from "./types.ts";
// the generator comes with this module: api() builds the document it serves through its hook
import "./document.ts";

/**
 * The handlers of the OpenAPI routes by path (the paths of `openApiPaths()`).
 *
 * @param prefix The plugin's prefix.
 * @param config The checked configuration.
 * @param document The document to serve, or a function that builds it on the first request for
 *   it (its JSON text is then kept).
 * @returns A handler for each path (none without a `path`).
 */
export function openApiHandlers(
  prefix: string,
  config: ResolvedOpenApiConfig,
  document: OpenApiDocument | (() => OpenApiDocument),
): Map<string, RouteHandler> {
  const [specPath, ...pagePaths] = openApiPaths(prefix, config);
  const handlers = new Map<string, RouteHandler>();
  // no `path`: the document is written by `generate` only, not served
  if (specPath === undefined) return handlers;
  const text = () =>
    JSON.stringify(typeof document === "function" ? document() : document, null, 2);
  let json = typeof document === "function" ? undefined : text() + "\n";
  handlers.set(specPath, () =>
    new Response(json ??= text() + "\n", {
      headers: { "content-type": JSON_TYPE, "cache-control": "no-cache" },
    }));
  if (config.docs === undefined) return handlers;
  // The page's module (and the npm package it reads) loads on the first request for one of its
  // paths: these handlers stand for those `docsRoutes()` makes (the same paths).
  const options = {
    path: prefix + config.docs,
    specUrl: specPath,
    title: config.options.info.title,
    servers: config.options.servers?.map((s) => s.url) ?? [],
  };
  const page = handlersOnDemand(
    pagePaths,
    () =>
      import("./_docs.ts").then(({ docsRoutes }) =>
        new Map(docsRoutes(options).map((r) => [r.path, r.handler]))
      ),
  );
  for (const [path, handler] of page) handlers.set(path, handler);
  return handlers;
}
