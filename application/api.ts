/**
 * `api()`: the REST plugin. It discovers route files under `<entry dir>/<scanFolder>`
 * through the generated `.gen/api.gen.ts` loader or, when that is missing or out of date, by
 * scanning at start-up; it also takes explicit routes with `.route()`. Every endpoint is compiled
 * once at warmup. With the `openapi` option it also serves the OpenAPI document (and, with
 * `openapi.docs`, a Swagger UI page); `api().openapi()` returns the document after warmup. The
 * generator (`openapi/document.ts`) loads at warmup outside production; in production it loads
 * with the first request for the document (or its page), so a cold start never loads it.
 *
 * @module
 */

import {
  type AppContext,
  type LoaderManifest,
  type ModuleMap,
  type Plugin,
  type SchemaLike,
  type SchemaNode,
  toSchemaNode,
} from "@fw/runtime";
import { compileEndpoint } from "./compile_endpoint.ts";
import { hasPolicies } from "./policies/_hook.ts";
import { type FileRoute, isEndpoint, routesOfTable } from "./endpoint.ts";
import type { EndpointDefinition } from "./endpoint_types.ts";
import type { StreamOptions } from "./streams/options.ts";
import type { ApiOpenApiConfig, OpenApiDocument, OpenApiOptions } from "./openapi/types.ts";
import {
  checkApiOpenApiConfig,
  checkOpenApiOptions,
  generator,
  openApiPaths,
  type ResolvedOpenApiConfig,
} from "./openapi/_config.ts";
import { parsePattern } from "./router/router.ts";
import { handlersOnDemand } from "./_late.ts";

/** Options of {@linkcode api}. */
export interface ApiOptions {
  /** Folder scanned for route files, relative to the entry directory (default `api`). */
  scanFolder?: string;
  /** Discover route files (default true). With false, only `.route()` routes are served. */
  autoScan?: boolean;
  /** URL prefix for every route; default the enclosing module's path. */
  prefix?: string;
  /** Entry directory to scan from (path, `file:` URL or `import.meta.url`); default the app's. */
  root?: string | URL;
  /** A statically imported `.gen/api.gen.ts` default export (for Deno Deploy). */
  manifest?: LoaderManifest;
  /** Settings of stream endpoints: SSE heartbeats, WebSocket limits and idle timeout. */
  streams?: StreamOptions;
  /**
   * Enables the OpenAPI document: `title` and `version` (or `info`), `description`,
   * `servers`; served at `path` (default `/openapi.json`) below the prefix, with a Swagger UI
   * page at `docs` when given; `generate` writes it to `.gen/openapi.json`.
   */
  openapi?: ApiOpenApiConfig;
}

/** A route the plugin serves, with its definition (for OpenAPI and tests). */
export interface ApiRoute {
  /** Upper-case method. */
  method: string;
  /** Full pattern including the prefix (`/v1/users/:id`). */
  path: string;
  /** Route file relative to the scan folder, or `api().route()` for explicit routes. */
  source: string;
  /** The endpoint definition. */
  definition: EndpointDefinition;
}

/** A globally documented error response (`api().throws()`). */
export interface GlobalThrows {
  /** HTTP status. */
  status: number;
  /** Description. */
  description: string;
  /** Body schema, when given. */
  schema?: SchemaNode;
}

/** The `api()` plugin. */
export interface ApiPlugin extends Plugin {
  /**
   * Adds an explicit route.
   *
   * @param method HTTP method.
   * @param path Pattern (`/users/:id`, `/files/*path`).
   * @param definition An `endpoint()` definition.
   * @returns This plugin.
   */
  route(method: string, path: string, definition: EndpointDefinition): ApiPlugin;
  /**
   * Documents an error response on every route (metadata only).
   *
   * @param status HTTP status (400..599).
   * @param description Description.
   * @param schema Body schema.
   * @returns This plugin.
   */
  throws(status: number, description: string, schema?: SchemaLike): ApiPlugin;
  /**
   * The OpenAPI 3.0.3 document of the routes served; call it after warmup. Its generator is
   * loaded at warmup outside production (`NODE_ENV` not `production`); in production it loads
   * with the first request for the document that `api({ openapi })` serves, so a production
   * application that calls this imports `@fw/application/openapi`.
   *
   * @param options Title, version, description and servers; default those of `api({ openapi })`.
   * @returns A new document.
   * @throws {Error} Before warmup, or when the generator is not loaded.
   * @throws {TypeError} For invalid options, or when neither they nor `api({ openapi })` are given.
   */
  openapi(options?: OpenApiOptions): OpenApiDocument;
  /** The routes served, after warmup. */
  readonly routes: readonly ApiRoute[];
  /** The global throws. */
  readonly globalThrows: readonly GlobalThrows[];
  /** The options given. */
  readonly options: Readonly<ApiOptions>;
  /** The prefix routes are served under (`""` for none); known after warmup. */
  readonly prefix: string;
}

/** The source of the routes `api({ openapi })` adds. */
const OPENAPI_SOURCE = "api({ openapi })";

const METHOD = /^(GET|POST|PUT|PATCH|DELETE|HEAD|OPTIONS)$/;

function normalisePrefix(prefix: string | undefined, where: string): string {
  if (prefix === undefined || prefix === "" || prefix === "/") return "";
  if (typeof prefix !== "string" || !prefix.startsWith("/")) {
    throw new TypeError(`${where}: "prefix" must start with "/", got ${JSON.stringify(prefix)}`);
  }
  return prefix.replace(/\/+$/, "");
}

/**
 * Creates the REST plugin.
 *
 * @param options Scan folder, auto-scan, prefix, root, a static manifest, stream settings and
 *   the OpenAPI document.
 * @returns The plugin.
 * @throws {TypeError} For invalid options (at once) and, at start-up, a missing route folder,
 *   invalid route files, conflicting routes (naming both files) and routes that cannot be
 *   documented.
 *
 * @example Explicit routes without scanning
 * ```ts
 * import assert from "node:assert/strict";
 * import { api, application, endpoint, Int } from "@fw/application";
 *
 * const users = api({ autoScan: false, prefix: "/v1" }).route(
 *   "GET",
 *   "/users/:id",
 *   endpoint().params({ id: Int }).handle((ctx) => ({ id: ctx.params.id })),
 * );
 * const app = application().use(users);
 * assert.deepEqual(await (await app.request("/v1/users/7")).json(), { id: 7 });
 * assert.equal((await app.request("/v1/users/x")).status, 400);
 * ```
 *
 * @example The OpenAPI document
 * ```ts
 * import assert from "node:assert/strict";
 * import { api, application, endpoint, Int } from "@fw/application";
 *
 * const users = api({ autoScan: false, openapi: { title: "Users", version: "1.0.0" } })
 *   .route("GET", "/users/:id", endpoint().params({ id: Int }).handle((ctx) => ctx.params))
 *   .throws(503, "Maintenance window");
 * const app = application().use(users);
 * const doc = await (await app.request("/openapi.json")).json();
 * assert.equal(doc.info.version, "1.0.0");
 * assert.deepEqual(Object.keys(doc.paths["/users/{id}"].get.responses), [
 *   "400",
 *   "406",
 *   "500",
 *   "503",
 *   "2XX",
 * ]);
 * assert.deepEqual(users.openapi(), doc);
 * ```
 */
export function api(options: ApiOptions = {}): ApiPlugin {
  const scanFolder = options.scanFolder ?? "api";
  if (typeof scanFolder !== "string" || scanFolder === "" || scanFolder.startsWith("/")) {
    throw new TypeError(
      `api(): "scanFolder" must be a relative folder name, got ${JSON.stringify(scanFolder)}`,
    );
  }
  if (options.autoScan !== undefined && typeof options.autoScan !== "boolean") {
    throw new TypeError(`api(): "autoScan" must be a boolean`);
  }
  const explicitPrefix = options.prefix === undefined
    ? undefined
    : normalisePrefix(options.prefix, "api()");
  const explicit: { method: string; path: string; definition: EndpointDefinition }[] = [];
  const globalThrows: GlobalThrows[] = [];
  const routes: ApiRoute[] = [];
  const openapi: ResolvedOpenApiConfig | undefined = options.openapi === undefined
    ? undefined
    : checkApiOpenApiConfig(options.openapi);
  let prefix = explicitPrefix ?? "";
  let warmed = false;
  let maxBodyBytes: number | undefined;

  /** The document of the routes served, by the generator (`label`: who asks, for its error). */
  const documentOf = (chosen: OpenApiOptions, label: string) =>
    generator.require(label)(routes, { ...chosen, globalThrows, prefix, maxBodyBytes });

  const plugin: ApiPlugin = {
    name: "api",
    options,
    routes,
    globalThrows,
    get prefix() {
      return prefix;
    },
    openapi(given) {
      if (!warmed) {
        throw new Error("api().openapi() needs the routes: call it after app.warmup() or start()");
      }
      if (given === undefined && openapi === undefined) {
        throw new TypeError(
          "api().openapi(): pass { info: { title, version } } or configure api({ openapi })",
        );
      }
      return documentOf(
        given === undefined ? openapi!.options : checkOpenApiOptions(given, "api().openapi()"),
        "api().openapi()",
      );
    },
    route(method, path, definition) {
      const m = String(method).toUpperCase();
      if (!METHOD.test(m)) {
        throw new TypeError(`api().route(): unknown method ${JSON.stringify(method)}`);
      }
      parsePattern(path);
      if (!isEndpoint(definition)) {
        throw new TypeError(
          `api().route("${m}", "${path}"): the definition must be made with endpoint()`,
        );
      }
      explicit.push({ method: m, path, definition });
      return plugin;
    },
    throws(status, description, schema) {
      if (!Number.isInteger(status) || status < 400 || status > 599) {
        throw new TypeError(`api().throws(): status must be an integer in 400..599, got ${status}`);
      }
      globalThrows.push({
        status,
        description: String(description),
        schema: schema === undefined ? undefined : toSchemaNode(schema, `throws(${status})`),
      });
      return plugin;
    },
    async warmup(ctx: AppContext) {
      prefix = explicitPrefix ?? ctx.prefix;
      // endpoints check their results outside production only: the check's code loads then
      if (!ctx.production) await import("./response_validation.ts");
      const found: ApiRoute[] = [];
      if (options.autoScan !== false) {
        // with a generated loader's route table, `generate` has read the file names: route
        // discovery does not load
        const manifest = options.manifest;
        const discovered = (manifest?.routes && routesOfTable(manifest.modules, manifest.routes)) ??
          await scanRoutes(options, scanFolder, ctx);
        for (const r of discovered) {
          found.push({
            method: r.method,
            path: joinPath(prefix, r.path),
            source: `${scanFolder}/${r.file}`,
            definition: r.definition,
          });
        }
      }
      for (const r of explicit) {
        found.push({
          method: r.method,
          path: joinPath(prefix, r.path),
          source: "api().route()",
          definition: r.definition,
        });
      }
      // the stream code (SSE, WebSocket) and the route policies load only when a route needs them
      const endpoints = found.map((r) => r.definition).filter(isEndpoint);
      // (loading them installs their compiler in the hook compileEndpoint() reads)
      if (endpoints.some((d) => d.mode !== "unary")) await import("./streams/compile_stream.ts");
      if (endpoints.some((d) => hasPolicies(d.meta))) {
        await import("./policies/_route_policies.ts");
      }
      for (const r of found) {
        const handler = compileEndpoint(r.definition, {
          method: r.method,
          route: r.path,
          app: ctx,
          streams: options.streams,
        });
        ctx.addRoute({
          method: r.method,
          path: r.path,
          handler,
          source: r.source,
          meta: r.definition,
        });
        routes.push(r);
      }
      warmed = true;
      maxBodyBytes = ctx.http.maxBodyBytes;
      if (openapi) {
        // The routes are registered now; their code and the generator load with them in
        // development, where the document is built at once so that a route that cannot be
        // documented fails start-up, and on the first request for one of them in production,
        // where it is built then: a cold start loads neither.
        const build = () => documentOf(openapi.options, OPENAPI_SOURCE);
        const handlersOf = ({ openApiHandlers }: typeof import("./openapi/_serve.ts")) =>
          openApiHandlers(prefix, openapi, ctx.production ? build : build());
        const handlers = ctx.production
          ? handlersOnDemand(
            openApiPaths(prefix, openapi),
            () => import("./openapi/_serve.ts").then(handlersOf),
          )
          : handlersOf(await import("./openapi/_serve.ts"));
        for (const [path, handler] of handlers) {
          ctx.addRoute({ method: "GET", path, source: OPENAPI_SOURCE, handler });
        }
      } else if (!ctx.production) {
        // api().openapi() and `generate` call the generator in development and tests
        await import("./openapi/document.ts");
      }
    },
  };
  return plugin;
}

/**
 * The routes of the route files, found by route discovery (`_scan.ts`, loaded only here: with
 * `autoScan: false` or a generated loader's route table it never loads).
 */
async function scanRoutes(
  options: ApiOptions,
  scanFolder: string,
  ctx: AppContext,
): Promise<FileRoute[]> {
  // when the routes of a generated loader (loaded already) declare a policy, the policy code
  // comes with route discovery (one dynamic import costs about as much as loading a module)
  const { discoverRoutes } = options.manifest && exportsPolicies(options.manifest.modules)
    ? await import("./_scan_policies.ts")
    : await import("./_scan.ts");
  return discoverRoutes(options.manifest?.modules, options.root, scanFolder, ctx);
}

/** Whether an endpoint exported by `modules` declares a route policy. */
function exportsPolicies(modules: ModuleMap): boolean {
  return Object.values(modules).some((m) =>
    Object.values(m).some((d) => isEndpoint(d) && hasPolicies(d.meta))
  );
}

function joinPath(prefix: string, path: string): string {
  if (!prefix) return path;
  return path === "/" ? prefix : prefix + path;
}
