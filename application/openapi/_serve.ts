/**
 * Serves what `api({ openapi })` asks for: the JSON document and, with `docs`, the Swagger UI
 * page. The page's module (and the npm package it reads) is loaded on the first request for the
 * page or one of its files.
 *
 * @module
 */

import { JSON_TYPE } from "../_errors.ts";
import type { AppContext, RouteHandler } from "@fw/runtime";
import type { ResolvedOpenApiConfig } from "./_config.ts";
import type { OpenApiDocument } from "./types.ts";
// the generator comes with this module: api() builds the document it serves through its hook
import "./document.ts";

const SOURCE = "api({ openapi })";

/**
 * Adds the OpenAPI routes to the application.
 *
 * @param ctx The application context.
 * @param prefix The plugin's prefix.
 * @param config The checked configuration.
 * @param document The document to serve, or a function that builds it on the first request for
 *   it (its JSON text is then kept).
 */
export function serveOpenApi(
  ctx: AppContext,
  prefix: string,
  config: ResolvedOpenApiConfig,
  document: OpenApiDocument | (() => OpenApiDocument),
): void {
  if (config.path === undefined) return;
  const specPath = prefix + config.path;
  const text = () =>
    JSON.stringify(typeof document === "function" ? document() : document, null, 2);
  let json = typeof document === "function" ? undefined : text() + "\n";
  ctx.addRoute({
    method: "GET",
    path: specPath,
    source: SOURCE,
    handler: () =>
      new Response(json ??= text() + "\n", {
        headers: {
          "content-type": JSON_TYPE,
          "cache-control": "no-cache",
        },
      }),
  });
  if (config.docs === undefined) return;
  // The page's module loads on the first request for one of its paths, not at start-up: these
  // routes stand for those `docsRoutes()` makes (the same paths) and hand each request on.
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
    ctx.addRoute({
      method: "GET",
      path: p,
      source: SOURCE,
      handler: (...args: Parameters<RouteHandler>) => load().then((m) => m.get(p)!(...args)),
    });
  }
}

/** The paths of the page below `docs` (`""` is the page itself), as `docsRoutes()` serves them. */
const DOCS_FILES = ["swagger-ui.css", "swagger-ui-bundle.js", "favicon.svg", "init.js", ""];
