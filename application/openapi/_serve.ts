/**
 * Serves what `api({ openapi })` asks for: the JSON document and, with `docs`, the Swagger UI
 * page. The page's module (and the npm package it reads) is loaded only when `docs` is set.
 *
 * @module
 */

import { JSON_TYPE } from "../_errors.ts";
import type { AppContext } from "@fw/runtime";
import type { ResolvedOpenApiConfig } from "./_config.ts";
import type { OpenApiDocument } from "./types.ts";

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
export async function serveOpenApi(
  ctx: AppContext,
  prefix: string,
  config: ResolvedOpenApiConfig,
  document: OpenApiDocument | (() => OpenApiDocument),
): Promise<void> {
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
  const { docsRoutes } = await import("./_docs.ts");
  const routes = docsRoutes({
    path: prefix + config.docs,
    specUrl: specPath,
    title: config.options.info.title,
    servers: config.options.servers?.map((s) => s.url) ?? [],
  });
  for (const route of routes) ctx.addRoute({ ...route, source: SOURCE });
}
