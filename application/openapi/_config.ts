/**
 * Checks the OpenAPI options of `api().openapi()` and the `api({ openapi })` configuration, so
 * that a mistake fails at once, naming the option; holds the generator for `api()` without
 * loading it (`generator`); and names the paths `api({ openapi })` serves (`openApiPaths()`), so
 * that `api()` registers them without loading the code that serves them.
 *
 * @module
 */

import type {
  ApiOpenApiConfig,
  OpenApiDocument,
  OpenApiDocumentOptions,
  OpenApiInfo,
  OpenApiOptions,
  OpenApiRoute,
  OpenApiServer,
} from "./types.ts";
import { LatePart } from "../_late.ts";

/** What `openApiDocument()` is: the generator `api()` builds its documents with. */
export type DocumentGenerator = (
  routes: readonly OpenApiRoute[],
  options: OpenApiDocumentOptions,
) => OpenApiDocument;

/**
 * `openApiDocument()`, installed by `document.ts` when it is evaluated. `api()` imports that
 * module at warmup outside production; in production, with `api({ openapi })`, on the first
 * request for the document or its page. So a production start-up never loads the generator
 * (about 30 KB of code); importing `@fw/application/openapi` loads it too.
 */
export const generator: LatePart<DocumentGenerator> = new LatePart((label) =>
  `${label}: the OpenAPI generator is not loaded; in production it loads with the first request for the document of api({ openapi }), or import "@fw/application/openapi"`
);

/** `api({ openapi })` after checking: what to document and where to serve it. */
export interface ResolvedOpenApiConfig {
  /** Info and servers. */
  readonly options: OpenApiOptions;
  /** Path of the JSON document below the prefix, or undefined when it is not served. */
  readonly path: string | undefined;
  /** Path of the documentation page below the prefix, if any. */
  readonly docs: string | undefined;
}

/** The paths of the documentation page below `docs` (`""` is the page itself). */
const DOCS_FILES: readonly string[] = [
  "swagger-ui.css",
  "swagger-ui-bundle.js",
  "favicon.svg",
  "init.js",
  "",
];

/**
 * The paths `api({ openapi })` serves: the JSON document, then the documentation page's files
 * and the page when `docs` is given.
 *
 * @param prefix The plugin's prefix.
 * @param config The checked configuration.
 * @returns The full paths (none when the document is not served).
 */
export function openApiPaths(prefix: string, config: ResolvedOpenApiConfig): string[] {
  if (config.path === undefined) return [];
  if (config.docs === undefined) return [prefix + config.path];
  const docs = prefix + config.docs;
  return [prefix + config.path, ...DOCS_FILES.map((file) => file ? `${docs}/${file}` : docs)];
}

const isObject = (v: unknown): v is Record<string, unknown> =>
  typeof v === "object" && v !== null && !Array.isArray(v);

function text(value: unknown, name: string, where: string, optional = false): string | undefined {
  if (value === undefined && optional) return undefined;
  if (typeof value !== "string" || (!optional && value.trim() === "")) {
    throw new TypeError(
      `${where}: "${name}" must be a ${optional ? "" : "non-empty "}string, got ${
        JSON.stringify(value) ?? String(value)
      }`,
    );
  }
  return value;
}

function infoOf(value: unknown, name: string, where: string): OpenApiInfo {
  if (!isObject(value)) throw new TypeError(`${where}: "${name}" must be an object`);
  const description = text(value.description, `${name}.description`, where, true);
  return {
    title: text(value.title, `${name}.title`, where)!,
    version: text(value.version, `${name}.version`, where)!,
    ...(description !== undefined && { description }),
  };
}

function serversOf(value: unknown, name: string, where: string): OpenApiServer[] | undefined {
  if (value === undefined) return undefined;
  if (!Array.isArray(value)) throw new TypeError(`${where}: "${name}" must be an array`);
  return value.map((s, i) => {
    if (!isObject(s)) throw new TypeError(`${where}: "${name}[${i}]" must be an object`);
    const description = text(s.description, `${name}[${i}].description`, where, true);
    return {
      url: text(s.url, `${name}[${i}].url`, where)!,
      ...(description !== undefined && { description }),
    };
  });
}

/**
 * Checks the options of `api().openapi()` / `openApiDocument()`.
 *
 * @param options The options.
 * @param where The caller, for messages.
 * @returns A copy with only the known fields.
 * @throws {TypeError} Naming the first invalid option.
 */
export function checkOpenApiOptions(options: unknown, where: string): OpenApiOptions {
  if (!isObject(options)) throw new TypeError(`${where}: expected { info: { title, version } }`);
  const servers = serversOf(options.servers, "servers", where);
  return { info: infoOf(options.info, "info", where), ...(servers && { servers }) };
}

function routePath(value: unknown, name: string): string {
  if (typeof value !== "string" || !value.startsWith("/") || value.length < 2) {
    throw new TypeError(
      `api(): "${name}" must be a path starting with "/", got ${JSON.stringify(value)}`,
    );
  }
  return value.replace(/\/+$/, "");
}

/**
 * Checks the `api({ openapi })` option: the flat `title`/`version`/`description` or an
 * `info` object (not both), `servers`, `path` and `docs`.
 *
 * @param config The option's value.
 * @returns The resolved configuration.
 * @throws {TypeError} Naming the invalid option (`"openapi.title"`).
 */
export function checkApiOpenApiConfig(config: ApiOpenApiConfig): ResolvedOpenApiConfig {
  const where = "api()";
  if (!isObject(config)) throw new TypeError(`${where}: "openapi" must be an object`);
  const flat = config.title !== undefined || config.version !== undefined ||
    config.description !== undefined;
  if (flat && config.info !== undefined) {
    throw new TypeError(
      `${where}: give either "openapi.info" or "openapi.title" and "openapi.version", not both`,
    );
  }
  const info = config.info !== undefined
    ? infoOf(config.info, "openapi.info", where)
    : infoOf(config, "openapi", where);
  const servers = serversOf(config.servers, "openapi.servers", where);
  const path = config.path === false
    ? undefined
    : routePath(config.path ?? "/openapi.json", "openapi.path");
  const docs = config.docs === undefined ? undefined : routePath(config.docs, "openapi.docs");
  if (docs !== undefined && path === undefined) {
    throw new TypeError(`${where}: "openapi.docs" needs the JSON document: remove "path: false"`);
  }
  if (docs !== undefined && docs === path) {
    throw new TypeError(
      `${where}: "openapi.docs" and "openapi.path" must differ, both are "${docs}"`,
    );
  }
  return { options: { info, ...(servers && { servers }) }, path, docs };
}
