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
 * @param document The document to serve.
 */
export async function serveOpenApi(
  ctx: AppContext,
  prefix: string,
  config: ResolvedOpenApiConfig,
  document: OpenApiDocument,
): Promise<void> {
  if (config.path === undefined) return;
  const specPath = prefix + config.path;
  const json = JSON.stringify(document, null, 2) + "\n";
  ctx.addRoute({
    method: "GET",
    path: specPath,
    source: SOURCE,
    handler: () =>
      new Response(json, {
        headers: {
          "content-type": JSON_TYPE,
          "cache-control": "no-cache",
        },
      }),
  });
  if (config.docs === undefined) return;
  const { docsRoutes } = await import("./_docs.ts");
  const routes = await docsRoutes({
    path: prefix + config.docs,
    specUrl: specPath,
    title: document.info.title,
    servers: document.servers?.map((s) => s.url) ?? [],
  });
  for (const route of routes) ctx.addRoute({ ...route, source: SOURCE });
}
