/**
 * Turns an endpoint definition into the router's {@linkcode RouteHandler}, once, at warmup.
 *
 * Per request, in order: params, query and body are validated (400 `{message, errors}` before the
 * handler), the DI scope is created when `.inject()` is used, the handler runs, its result is
 * checked against the declared response schema (outside production, warnings only) and sent by its
 * type; thrown values go through `errorResponse` in `_errors.ts` (non-HTTP errors are logged
 * with their stack and answered with a generic 500). The scope is disposed after the response is
 * built.
 *
 * Route policies (`.cors()`, `.rateLimit()`, `.secure()`) wrap the compiled endpoint (see
 * `policies/_route_policies.ts`) and run before validation.
 *
 * Hot path: validators are compiled here, the handler runs synchronously when nothing needs
 * awaiting, a request to an endpoint without schemas costs one context object, and an endpoint
 * without policies has no policy wrapper at all.
 *
 * @module
 */

import {
  errorResponse,
  invalidInput,
  JSON_HEADERS,
  safeHandlers,
  syncHandlers,
} from "./_errors.ts";
import { hasPolicies, policyCompiler, preflights } from "./policies/_hook.ts";
import {
  type AppContext,
  type Logger,
  NotAcceptableException,
  type ProviderMap,
  type RequestInfo,
  resumeContext,
  type RouteHandler,
  type Scope,
  tryContext,
  type ValidationIssue,
  type Validator,
} from "@fw/runtime";
import { readJson } from "./body.ts";
import { requestHeader, RequestValues } from "./_dispatch.ts";
import { streamCompiler } from "./streams/_registry.ts";
import { MEDIA_TYPES, type MediaType, negotiate } from "./content_negotiation.ts";
import type { EndpointDefinition, EndpointMeta } from "./endpoint_types.ts";
import { isEndpoint } from "./endpoint.ts";
import { HttpResponse } from "./http_response.ts";
import {
  type ContextShared,
  inputValidator,
  type RawParams,
  RequestContext,
  validateParamsAndQuery,
} from "./request_context.ts";
import { compilerPartMissing, LatePart } from "./_late.ts";
import { serialize } from "./serialize/serialize.ts";
import type { CompileEndpointOptions } from "./endpoint_types.ts";

export type { CompileEndpointOptions };

type AnyHandler = (...args: unknown[]) => unknown;

/** What a response check needs from `ctx`. */
export interface ResponseCheckContext {
  /** The response status. */
  readonly statusCode: number;
  /** The request path, for the log line. */
  path(): string;
}

/** Checks one result; never throws and never changes the result. */
export type ResponseCheck = (result: unknown, ctx: ResponseCheckContext) => void;

/**
 * `responseCheck()` of `response_validation.ts`, installed when that module is evaluated. Only
 * outside production does an endpoint check its results, so a production start-up never loads
 * it: `api()` imports it at warmup otherwise, `@fw/application/compile` always.
 */
export const responseChecks: LatePart<
  (meta: EndpointMeta, source: { readonly logger: Logger }) => ResponseCheck | undefined
> = new LatePart(compilerPartMissing("response validation"));

const TEXT_HEADERS: HeadersInit = { "content-type": "text/plain;charset=UTF-8" };
const MEDIA_HEADERS = new Map<MediaType, HeadersInit>(
  MEDIA_TYPES.map((m) => [m, { "content-type": m.contentType }]),
);
const BODY_REQUIRED: ValidationIssue[] = [{ field: "body", message: "body is required" }];
const SUPPORTED = MEDIA_TYPES.map((m) => m.type).join(", ");

function nullBody(status: number): boolean {
  return status === 204 || status === 205 || status === 304;
}

/** A response with a serialised body. */
function serialized(body: string, status: number, headers: HeadersInit | undefined): Response {
  if (status === 200) return new Response(body, { headers });
  return new Response(nullBody(status) ? null : body, { status, headers });
}

/** Drops the request from its scope's values once its response is ready (see `RequestValues`). */
function release(values: Record<string, unknown> | undefined): void {
  if (values instanceof RequestValues) values.release();
}

/** A compiled unary endpoint; `run` is the route handler. */
class CompiledEndpoint {
  readonly #handler: AnyHandler;
  readonly #inject: ProviderMap | undefined;
  readonly #params: Validator<unknown> | undefined;
  readonly #query: Validator<unknown> | undefined;
  readonly #body: Validator<unknown> | undefined;
  readonly #bodyOptional: boolean;
  readonly #negotiateEarly: boolean;
  readonly #check: ResponseCheck | undefined;
  readonly #shared: ContextShared;
  readonly #app: AppContext;
  readonly #label: string;
  /** True for an `async function` handler: it runs in an async scope (see `#invoke`). */
  readonly #asyncHandler: boolean;

  constructor(def: EndpointDefinition, { method, route, app }: CompileEndpointOptions) {
    const meta = def.meta;
    this.#label = `${method} ${route}`;
    this.#handler = def.handler as AnyHandler;
    this.#asyncHandler = def.handler.constructor.name === "AsyncFunction";
    this.#inject = meta.inject;
    this.#params = inputValidator(meta.params, "params", this.#label);
    this.#query = inputValidator(meta.query, "query", this.#label);
    this.#body = inputValidator(meta.body, "body", this.#label);
    this.#bodyOptional = meta.body?.optional === true;
    const kind = meta.returns?.schema?.kind;
    this.#negotiateEarly = kind === "object" || kind === "array";
    this.#check = app.production ? undefined : responseChecks.require(this.#label)(meta, app);
    this.#shared = { route, app, status: meta.returns?.status ?? 200 };
    this.#app = app;
  }

  run(req: Request, params: RawParams, info: RequestInfo): Response | Promise<Response> {
    const ctx = new RequestContext(req, params, info, this.#shared);
    try {
      const invalid = validateParamsAndQuery(ctx, this.#params, this.#query);
      if (invalid !== undefined) return invalid;
      if (this.#negotiateEarly) {
        const media = negotiate(requestHeader(req, "accept"));
        if (media === undefined) return this.#notAcceptable(req);
        ctx._media = media;
      }
      // The dispatcher opened a synchronous scope; only code that may await gets an async one
      // (see `#invoke`), and the body is read outside any.
      if (this.#body !== undefined) return this.#withBody(ctx, tryContext());
      if (this.#inject !== undefined || this.#asyncHandler) return this.#invoke(ctx, tryContext());
      const result = this.#handler(ctx);
      if (result instanceof Promise) return this.#settle(result, ctx, tryContext());
      return this.#finish(result, ctx);
    } catch (error) {
      return this.#fail(error);
    }
  }

  /** Finishes with the handler's promised result; the request leaves its scope first. */
  #settle(
    result: Promise<unknown>,
    ctx: RequestContext,
    values: Record<string, unknown> | undefined,
  ): Promise<Response> {
    return result.then(
      (value) => {
        release(values);
        return this.#finish(value, ctx);
      },
      (error) => {
        release(values);
        return this.#fail(error);
      },
    );
  }

  /**
   * Reads and validates the body, then runs the handler in the request's scope `values` (no
   * `async` frame on this path, and no async scope around the read).
   */
  #withBody(ctx: RequestContext, values: Record<string, unknown> | undefined): Promise<Response> {
    return readJson(
      ctx.req,
      this.#app.http.maxBodyBytes,
      false,
      this.#app.http.bodyTimeoutMs,
    ).then(
      (raw) => this.#afterBody(raw, ctx, values),
      (error) => this.#fail(error),
    );
  }

  #afterBody(
    raw: unknown,
    ctx: RequestContext,
    values: Record<string, unknown> | undefined,
  ): Response | Promise<Response> {
    try {
      if (raw !== undefined) {
        const r = this.#body!(raw);
        if (!r.ok) return invalidInput(r.errors);
        ctx._bodyValue = r.value;
      } else if (!this.#bodyOptional) {
        return invalidInput(BODY_REQUIRED);
      }
      ctx._bodyReady = true;
      return this.#invoke(ctx, values);
    } catch (error) {
      return this.#fail(error);
    }
  }

  /**
   * Runs the handler in the request's scope `values`: an async scope around an `async` handler
   * or `.inject()` providers, a synchronous one otherwise.
   */
  #invoke(
    ctx: RequestContext,
    values: Record<string, unknown> | undefined,
  ): Response | Promise<Response> {
    if (this.#inject !== undefined) {
      return resumeContext(values, true, () => this.#runInjected(ctx, values));
    }
    const result = resumeContext(values, this.#asyncHandler, () => this.#handler(ctx));
    if (result instanceof Promise) return this.#settle(result, ctx, values);
    release(values);
    return this.#finish(result, ctx);
  }

  /** Runs the handler with its `.inject()` providers resolved in a new request scope. */
  async #runInjected(
    ctx: RequestContext,
    values: Record<string, unknown> | undefined,
  ): Promise<Response> {
    let scope: Scope | undefined;
    try {
      scope = this.#app.container.createScope();
      const deps = await scope.resolveAll(this.#inject!);
      return this.#finish(await this.#handler(deps, ctx), ctx);
    } catch (error) {
      return this.#fail(error);
    } finally {
      if (scope !== undefined) await this.#dispose(scope);
      release(values);
    }
  }

  async #dispose(scope: Scope): Promise<void> {
    try {
      await scope.dispose();
    } catch (error) {
      this.#app.logger.error(`Failed to dispose the request scope of ${this.#label}`, { error });
    }
  }

  #finish(result: unknown, ctx: RequestContext): Response | Promise<Response> {
    try {
      if (this.#check !== undefined) this.#checkResponse(result, ctx);
      return this.#respond(result, ctx);
    } catch (error) {
      return this.#fail(error);
    }
  }

  #checkResponse(result: unknown, ctx: RequestContext): void {
    try {
      this.#check!(result, ctx);
    } catch (error) {
      this.#app.logger.warn(`[response-validation] ${ctx.path()} — check failed`, { error });
    }
  }

  #respond(result: unknown, ctx: RequestContext): Response | Promise<Response> {
    const status = ctx.statusCode;
    if (typeof result === "string") {
      // No init at all is the cheapest Response to build; the Fetch standard gives a string body
      // exactly our text content type.
      if (status === 200) return new Response(result);
      return new Response(nullBody(status) ? null : result, { status, headers: TEXT_HEADERS });
    }
    if (result === undefined) return new Response(null, { status: status === 200 ? 204 : status });
    if (result instanceof HttpResponse) return result.toResponse();
    if (result instanceof Response) return result;
    const media = ctx._media ?? negotiate(requestHeader(ctx.req, "accept"));
    if (media === undefined) return this.#notAcceptable(ctx.req);
    const body = serialize(result, media.format);
    const headers = media.format === "json" ? JSON_HEADERS : MEDIA_HEADERS.get(media);
    if (typeof body !== "string") {
      // The first YAML or XML response loads that format's writer.
      return body.then((text) => serialized(text, status, headers), (error) => this.#fail(error));
    }
    return serialized(body, status, headers);
  }

  #notAcceptable(req: Request): Response {
    const accept = (requestHeader(req, "accept") ?? "").slice(0, 200);
    return this.#fail(
      new NotAcceptableException(
        `Cannot produce a response matching Accept "${accept}": supported types are ${SUPPORTED}`,
      ),
    );
  }

  #fail(error: unknown): Response {
    return errorResponse(error, this.#app.logger, this.#label);
  }
}

/**
 * Compiles an endpoint for a route. Called by the API plugin at warmup, once per route; a plugin
 * of your own can use it to mount an `endpoint()` with `ctx.addRoute()`.
 *
 * @param def The endpoint definition (from `endpoint()`).
 * @param options Method, full route pattern and the application context.
 * @returns The route handler.
 * @throws {TypeError} When `def` is not an endpoint, a schema cannot be compiled for its area (a
 *   nested object in `.params()`), or a stream endpoint is invalid (see `compileStreamEndpoint()`).
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { type AppContext, Container, createLogger } from "@fw/runtime";
 * import { endpoint, Int } from "@fw/application";
 * import { compileEndpoint } from "@fw/application/compile";
 *
 * // The members of the application context that compileEndpoint reads.
 * const app = {
 *   production: false,
 *   logger: createLogger({ level: "silent" }),
 *   container: new Container(),
 *   http: { maxBodyBytes: 1024 * 1024, trustProxy: false },
 * } as AppContext;
 * const def = endpoint().params({ id: Int }).handle((ctx) => ({ id: ctx.params.id }));
 * const handler = compileEndpoint(def, { method: "GET", route: "/users/:id", app });
 * const server = { hostname: "localhost", port: 0, url: "http://localhost/" };
 * const res = await handler(new Request("http://localhost/users/7"), { id: "7" }, { server });
 * assert.deepEqual(await res.json(), { id: 7 });
 * ```
 */
export function compileEndpoint(
  def: EndpointDefinition,
  options: CompileEndpointOptions,
): RouteHandler {
  if (!isEndpoint(def)) {
    throw new TypeError(
      `Cannot compile route "${options.method} ${options.route}": expected an endpoint() definition`,
    );
  }
  const label = `${options.method} ${options.route}`;
  if (def.mode !== "unary") return streamCompiler.require(label)(def, options);
  const compiled = new CompiledEndpoint(def, options);
  const meta = def.meta;
  const policies = hasPolicies(meta)
    ? new (policyCompiler.require(label))(meta, label, options.app, false)
    : undefined;
  const handler: RouteHandler = policies === undefined
    ? (req, params, info) => compiled.run(req, params, info)
    : (req, params, info) => policies.run(req, params, info, compiled);
  safeHandlers.add(handler);
  // Without policies that await, the endpoint opens its own async scope where it needs one.
  if (policies === undefined || policies.sync) syncHandlers.add(handler);
  if (policies?.cors !== undefined) preflights.set(handler, policies.cors);
  return handler;
}
