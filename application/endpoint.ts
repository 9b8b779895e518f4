/**
 * `endpoint()`: declares one HTTP route's inputs, outputs, policies and handler.
 *
 * Simple mode `endpoint(ctx => ...)` takes just a handler. Builder mode `endpoint()` chains
 * declarations and ends with `.handle()`. Schemas are normalised when the builder method is
 * called, so a bad schema or option fails when the route file is loaded, naming the method.
 *
 * @module
 */

import {
  ERROR_CODES,
  type ErrorCode,
  type LoaderRoute,
  type ModuleMap,
  type ProviderMap,
  type SchemaLike,
  type SchemaNode,
  toSchemaNode,
} from "@fw/runtime";
import type {
  CorsOptions,
  EndpointBuilder,
  EndpointDefinition,
  EndpointMeta,
  EndpointMode,
  Guard,
  RateLimitOptions,
  ResponseMeta,
  SecureMeta,
  SecureOptions,
  SimpleHandler,
} from "./endpoint_types.ts";
import type { RawParams, RawQuery } from "./request_context.ts";
import { checkCorsOptions, checkRateLimitOptions } from "./policies/_options.ts";

type MutableMeta = { -readonly [K in keyof EndpointMeta]: EndpointMeta[K] };

const EMPTY_META: EndpointMeta = Object.freeze({ responses: [], mayThrow: [], throws: [] });

function checkStatus(status: unknown, method: string, min = 100): number {
  if (typeof status !== "number" || !Number.isInteger(status) || status < min || status > 599) {
    throw new RangeError(
      `Invalid status ${String(status)} in .${method}(): expected an integer from ${min} to 599`,
    );
  }
  return status;
}

function node(schema: unknown, method: string): SchemaNode {
  return toSchemaNode(schema, `.${method}()`);
}

function flatNode(schema: unknown, method: string): SchemaNode {
  const n = node(schema, method);
  if (n.kind !== "object") {
    throw new TypeError(
      `Invalid .${method}() schema: expected an object of schemas, got a ${n.kind} schema`,
    );
  }
  return n;
}

function optionalNode(schema: unknown, method: string): SchemaNode | undefined {
  return schema === undefined ? undefined : node(schema, method);
}

function text(value: unknown, what: string): string {
  if (typeof value !== "string") {
    throw new TypeError(`Invalid ${what}: expected a string, got ${typeof value}`);
  }
  return value;
}

function strings(value: unknown, what: string): readonly string[] {
  if (value === undefined) return [];
  if (!Array.isArray(value) || value.some((v) => typeof v !== "string")) {
    throw new TypeError(`Invalid ${what}: expected an array of strings`);
  }
  return Object.freeze([...value]);
}

function checkSecure(options?: SecureOptions | Guard): SecureMeta {
  if (options === undefined) return Object.freeze({ scopes: [], roles: [] });
  if (typeof options === "function") {
    return Object.freeze({ scopes: [], roles: [], guard: options });
  }
  if (typeof options !== "object" || options === null) {
    throw new TypeError(
      "Invalid .secure() argument: expected { scopes, roles } or a guard function",
    );
  }
  for (const key of Object.keys(options)) {
    if (key !== "scopes" && key !== "roles") {
      throw new TypeError(
        `Invalid .secure() options: unknown option "${key}" (known: scopes, roles)`,
      );
    }
  }
  return Object.freeze({
    scopes: strings(options.scopes, '.secure() option "scopes"'),
    roles: strings(options.roles, '.secure() option "roles"'),
  });
}

function checkInject(providers: ProviderMap): ProviderMap {
  if (typeof providers !== "object" || providers === null || Array.isArray(providers)) {
    throw new TypeError("Invalid .inject() argument: expected an object of providers");
  }
  for (const [key, p] of Object.entries(providers)) {
    if (
      typeof p !== "object" || p === null || typeof p.name !== "string" ||
      typeof p.lifetime !== "string"
    ) {
      throw new TypeError(
        `Invalid .inject() provider "${key}": expected a provider made with provider()`,
      );
    }
  }
  return Object.freeze({ ...providers });
}

function modeOf(meta: EndpointMeta): EndpointMode {
  const inStream = meta.body?.kind === "stream";
  const outStream = meta.returns?.schema?.kind === "stream";
  if (inStream) return outStream ? "bidi" : "client-stream";
  return outStream ? "server-stream" : "unary";
}

function define(meta: EndpointMeta, handler: unknown): EndpointDefinition {
  if (typeof handler !== "function") {
    throw new TypeError(`Invalid endpoint handler: expected a function, got ${typeof handler}`);
  }
  return Object.freeze({
    kind: "fw.endpoint",
    mode: modeOf(meta),
    meta,
    handler: handler as EndpointDefinition["handler"],
  });
}

/** The immutable builder behind {@linkcode EndpointBuilder}. */
class Builder {
  readonly #meta: EndpointMeta;

  constructor(meta: EndpointMeta) {
    this.#meta = meta;
  }

  #with(patch: Partial<MutableMeta>): Builder {
    return new Builder(Object.freeze({ ...this.#meta, ...patch }));
  }

  params(schema: unknown): Builder {
    const n = flatNode(schema, "params");
    if (Object.values(n.properties ?? {}).some((p) => p.optional)) {
      throw new TypeError("Invalid .params() schema: path parameters cannot be Optional()");
    }
    return this.#with({ params: n });
  }

  query(schema: unknown): Builder {
    return this.#with({ query: flatNode(schema, "query") });
  }

  body(schema: unknown): Builder {
    return this.#with({ body: node(schema, "body") });
  }

  returns(first: unknown, description?: unknown, schema?: unknown): Builder {
    if (typeof first !== "number") {
      return this.#with({
        returns: Object.freeze({ status: 200, schema: node(first, "returns") }),
      });
    }
    const returns = {
      status: checkStatus(first, "returns"),
      description: description === undefined
        ? undefined
        : text(description, ".returns() description"),
      schema: optionalNode(schema, "returns"),
    };
    return this.#with({ returns: Object.freeze(returns) });
  }

  response(status: number, description: string, schema?: SchemaLike): Builder {
    const entry: ResponseMeta = Object.freeze({
      status: checkStatus(status, "response"),
      description: text(description, ".response() description"),
      schema: optionalNode(schema, "response"),
    });
    return this.#with({ responses: Object.freeze([...this.#meta.responses, entry]) });
  }

  mayThrow(...codes: ErrorCode[]): Builder {
    for (const code of codes) {
      if (typeof code !== "string" || !Object.hasOwn(ERROR_CODES, code)) {
        throw new TypeError(
          `Invalid .mayThrow() code "${String(code)}": expected one of ${
            Object.keys(ERROR_CODES).join(", ")
          }`,
        );
      }
    }
    return this.#with({ mayThrow: Object.freeze([...this.#meta.mayThrow, ...codes]) });
  }

  throws(status: number, description: string, schema?: SchemaLike): Builder {
    const entry: ResponseMeta = Object.freeze({
      status: checkStatus(status, "throws", 400),
      description: text(description, ".throws() description"),
      schema: optionalNode(schema, "throws"),
    });
    const others = this.#meta.throws.filter((t) => t.status !== entry.status);
    return this.#with({ throws: Object.freeze([...others, entry]) });
  }

  description(value: string): Builder {
    return this.#with({ description: text(value, ".description() argument") });
  }

  cors(options?: CorsOptions): Builder {
    return this.#with({ cors: checkCorsOptions(options) });
  }

  rateLimit(options: RateLimitOptions): Builder {
    return this.#with({ rateLimit: checkRateLimitOptions(options) });
  }

  secure(options?: SecureOptions | Guard): Builder {
    return this.#with({ secure: checkSecure(options) });
  }

  inject(providers: ProviderMap): Builder {
    return this.#with({ inject: checkInject(providers) });
  }

  handle(handler: unknown): EndpointDefinition {
    return define(this.#meta, handler);
  }
}

/**
 * Starts an endpoint in builder mode: chain declarations, finish with `.handle()`.
 *
 * @returns A builder with nothing declared.
 *
 * @example Typed params, query and body
 * ```ts
 * import assert from "node:assert/strict";
 * import { endpoint, Int, isEndpoint, Min, Optional } from "@fw/application";
 *
 * const updateUser = endpoint()
 *   .params({ id: Int })
 *   .query({ notify: Optional(Boolean) })
 *   .body({ name: String, age: Min(0, Int) })
 *   .returns({ id: Int, name: String })
 *   .mayThrow("NotFound")
 *   .handle(async (ctx) => {
 *     const body = await ctx.body(); // { name: string; age: number }
 *     return { id: ctx.params.id, name: body.name };
 *   });
 * assert.ok(isEndpoint(updateUser));
 * assert.equal(updateUser.mode, "unary");
 * assert.deepEqual(updateUser.meta.mayThrow, ["NotFound"]);
 * ```
 */
export function endpoint(): EndpointBuilder;
/**
 * Defines an endpoint in simple mode: just a handler, no schemas.
 *
 * @param handler Receives `ctx`; its result is sent by its type (objects and arrays
 *   negotiated, strings as text, `HttpResponse` as given, `undefined` as 204).
 * @returns The endpoint definition.
 * @throws {TypeError} When `handler` is not a function.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { endpoint } from "@fw/application";
 * const health = endpoint(() => ({ status: "ok" }));
 * assert.equal(health.kind, "fw.endpoint");
 * ```
 */
export function endpoint(handler: SimpleHandler): EndpointDefinition<RawParams, RawQuery>;
export function endpoint(
  handler?: SimpleHandler,
): EndpointBuilder | EndpointDefinition<RawParams, RawQuery> {
  if (handler === undefined) return new Builder(EMPTY_META) as unknown as EndpointBuilder;
  return define(EMPTY_META, handler) as EndpointDefinition<RawParams, RawQuery>;
}

/**
 * True for a value made by `endpoint(fn)` or `endpoint()...handle(fn)`.
 *
 * @param value Any value (for example a route file's export).
 * @returns Whether it is an endpoint definition.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { endpoint, isEndpoint } from "@fw/application";
 * assert.equal(isEndpoint(endpoint(() => "hi")), true);
 * assert.equal(isEndpoint({ kind: "other" }), false);
 * ```
 */
export function isEndpoint(value: unknown): value is EndpointDefinition {
  return typeof value === "object" && value !== null &&
    (value as { kind?: unknown }).kind === "fw.endpoint" &&
    typeof (value as { handler?: unknown }).handler === "function" &&
    typeof (value as { meta?: unknown }).meta === "object";
}

/** The exports of a `route.ts` that name a method, sorted. */
const ROUTE_EXPORTS = ["DELETE", "GET", "HEAD", "OPTIONS", "PATCH", "POST", "PUT"];

/** A route of the route files, as `api()` serves it (see {@linkcode routesOfFiles}). */
export interface FileRoute {
  /** Upper-case method. */
  method: string;
  /** Pattern relative to the prefix (`/users/:id`). */
  path: string;
  /** File relative to the route folder. */
  file: string;
  /** The endpoint definition. */
  definition: EndpointDefinition;
}

/**
 * The routes of a generated loader's route table (`LoaderManifest.routes`, what `generate` read
 * from the file names); `undefined` when the table does not list exactly the loader's files
 * (edited by hand), whose names route discovery then reads.
 *
 * @throws {Error} As {@linkcode routesOfFiles}.
 */
export function routesOfTable(
  modules: ModuleMap,
  table: readonly LoaderRoute[],
): FileRoute[] | undefined {
  if (table.length !== Object.keys(modules).length || !table.every((r) => r.file in modules)) {
    return undefined;
  }
  return routesOfFiles(modules, table);
}

/**
 * The routes of route files, from what their names declare (a route table, or route discovery's
 * reading of the names) and what they export: the default export of a file whose name declares
 * the method, the method-named exports of a `route.ts`.
 *
 * @param modules The files' modules.
 * @param files What each name declares, in the order of the files' names.
 * @returns The routes, sorted by path then method.
 * @throws {Error} Naming the file: a missing or non-endpoint export, a `route.ts` without method
 *   exports, a unary endpoint in a stream file, a route declared twice (naming both files).
 */
export function routesOfFiles(
  modules: ModuleMap,
  files: readonly LoaderRoute[],
): FileRoute[] {
  const routes: FileRoute[] = [];
  const declaredBy = new Map<string, string>();
  for (const { file, method, path, stream } of files) {
    const mod = modules[file];
    const names = method === undefined ? ROUTE_EXPORTS.filter((name) => name in mod) : ["default"];
    if (names.length === 0) {
      throw new Error(
        `Route file "${file}" exports no method: export GET, POST, PUT, PATCH or DELETE endpoints`,
      );
    }
    for (const name of names) {
      const definition = mod[name];
      if (!isEndpoint(definition)) {
        const what = name === "default" ? "a default export" : `the export "${name}"`;
        throw new Error(`Route file "${file}" must have ${what} made with endpoint()`);
      }
      if (stream && definition.mode === "unary") {
        throw new Error(
          `Route file "${file}" must export a stream endpoint: wrap .body() or .returns() in Stream()`,
        );
      }
      const key = `${method ?? name} ${path}`;
      const other = declaredBy.get(key);
      if (other !== undefined) {
        throw new Error(
          `Cannot register route "${key}": already registered by ${other} (also declared by ${file})`,
        );
      }
      declaredBy.set(key, file);
      routes.push({ method: method ?? name, path, file, definition });
    }
  }
  return routes.sort((a, b) =>
    a.path < b.path ? -1 : a.path > b.path ? 1 : a.method < b.method ? -1 : 1
  );
}
