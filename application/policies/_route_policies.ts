/**
 * The route policies of one endpoint (`.cors()`, `.rateLimit()`, `.secure()`) compiled into one
 * wrapper around its handler. Internal: `compileEndpoint()` and `compileStreamEndpoint()` use it
 * only for routes that declare a policy, so routes without policies pay nothing.
 *
 * Order per request: (streams) the Origin check -> the rate limit (429) -> identity, scopes and
 * roles (401/403) -> the guard (403) -> the handler. Every response of the route, the refusals
 * included, then gets its CORS and `RateLimit-*` headers. Everything stays synchronous unless a
 * store, the guard or the handler is asynchronous.
 *
 * @module
 */

import type { AppContext, AuthUser, RequestInfo } from "@fw/runtime";
import { errorResponse, jsonError } from "../_errors.ts";
import { CorsPolicy } from "./cors.ts";
import type { EndpointMeta } from "../endpoint_types.ts";
import { RATE_LIMIT_HEADERS, RateLimitPolicy, type RateLimitResult } from "./rate_limit.ts";
import { type ContextShared, type RawParams, RequestContext } from "../request_context.ts";
import { currentUser, SecurePolicy } from "./secure.ts";
import { type CompiledPolicies, policyCompiler, type Runner } from "./_hook.ts";

export { hasPolicies, preflights, type Runner } from "./_hook.ts";

type Result = RateLimitResult | undefined;

/** The compiled policies of one route. */
export class RoutePolicies implements CompiledPolicies {
  readonly #cors: CorsPolicy | undefined;
  readonly #rate: RateLimitPolicy | undefined;
  readonly #secure: SecurePolicy | undefined;
  readonly #stream: boolean;
  readonly #shared: ContextShared;
  /** The CORS policy, if any (registered for preflights). */
  readonly cors: CorsPolicy | undefined;
  /** True when the policies themselves never return a promise. */
  readonly sync: boolean;

  /**
   * @param meta The endpoint's declarations (at least one policy).
   * @param label `METHOD /route`.
   * @param app The application.
   * @param stream True for stream endpoints (cross-origin requests are refused with 403).
   */
  constructor(meta: EndpointMeta, label: string, app: AppContext, stream: boolean) {
    this.#rate = meta.rateLimit ? new RateLimitPolicy(meta.rateLimit, label, app) : undefined;
    this.#cors = meta.cors
      ? new CorsPolicy(meta.cors, this.#rate ? RATE_LIMIT_HEADERS : [])
      : undefined;
    this.#secure = meta.secure ? new SecurePolicy(meta.secure) : undefined;
    this.#stream = stream;
    this.#shared = { route: label.slice(label.indexOf(" ") + 1), app, status: 200 };
    this.cors = this.#cors;
    this.sync = (this.#rate?.sync ?? true) && this.#secure?.guard === undefined;
  }

  /**
   * Serves a request through the policies and then `inner`.
   *
   * @param req The request.
   * @param params Raw path parameters.
   * @param info Connection facts.
   * @param inner The compiled endpoint.
   * @returns The response.
   */
  run(
    req: Request,
    params: RawParams,
    info: RequestInfo,
    inner: Runner,
  ): Response | Promise<Response> {
    if (this.#stream && this.#cors !== undefined && !this.#cors.admitsStream(req)) {
      return this.#finish(
        jsonError(403, `Origin "${req.headers.get("origin")?.slice(0, 200)}" is not allowed`),
        req,
        undefined,
      );
    }
    if (this.#rate === undefined) return this.#check(req, params, info, inner, undefined);
    let counted: RateLimitResult | Promise<RateLimitResult>;
    try {
      counted = this.#rate.hit(req, info);
    } catch (error) {
      return this.#fail(error, req);
    }
    if (counted instanceof Promise) {
      return counted.then(
        (r) => this.#check(req, params, info, inner, r),
        (error) => this.#fail(error, req),
      );
    }
    return this.#check(req, params, info, inner, counted);
  }

  /** A store or key function failed: the error response (logged when internal). */
  #fail(error: unknown, req: Request): Response {
    return this.#finish(errorResponse(error, this.#shared.app.logger, req), req, undefined);
  }

  #check(
    req: Request,
    params: RawParams,
    info: RequestInfo,
    inner: Runner,
    rate: Result,
  ): Response | Promise<Response> {
    if (rate !== undefined && rate.limited) {
      return this.#finish(this.#rate!.tooMany(rate), req, rate);
    }
    const secure = this.#secure;
    if (secure !== undefined) {
      const user = currentUser();
      const refused = secure.check(req, user);
      if (refused !== undefined) return this.#finish(refused, req, rate);
      if (secure.guard !== undefined) {
        return this.#guard(secure, user!, req, params, info, inner, rate);
      }
    }
    return this.#inner(req, params, info, inner, rate);
  }

  async #guard(
    secure: SecurePolicy,
    user: AuthUser,
    req: Request,
    params: RawParams,
    info: RequestInfo,
    inner: Runner,
    rate: Result,
  ): Promise<Response> {
    let refused: Response | undefined;
    try {
      refused = await secure.runGuard(user, new RequestContext(req, params, info, this.#shared));
    } catch (error) {
      // the guard threw: answer like a handler that threw (its status, or a logged 500)
      refused = errorResponse(error, this.#shared.app.logger, req);
    }
    if (refused !== undefined) return this.#finish(refused, req, rate);
    return await this.#inner(req, params, info, inner, rate);
  }

  #inner(
    req: Request,
    params: RawParams,
    info: RequestInfo,
    inner: Runner,
    rate: Result,
  ): Response | Promise<Response> {
    const res = inner.run(req, params, info);
    if (res instanceof Promise) return res.then((r) => this.#finish(r, req, rate));
    return this.#finish(res, req, rate);
  }

  #finish(res: Response, req: Request, rate: Result): Response {
    if (res.status === 101) return res;
    try {
      this.#decorate(res.headers, req, rate);
      return res;
    } catch {
      // immutable headers (a Response from fetch()): copy it
      const copy = new Response(res.body, res);
      this.#decorate(copy.headers, req, rate);
      return copy;
    }
  }

  #decorate(headers: Headers, req: Request, rate: Result): void {
    if (this.#cors !== undefined) this.#cors.decorate(req, headers);
    if (rate !== undefined) this.#rate!.decorate(rate, headers);
  }
}

policyCompiler.install(RoutePolicies);
