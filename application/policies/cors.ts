/**
 * The CORS policy of one route (`.cors()`): option checks at start-up, the headers of actual
 * responses, the preflight answer, and the Origin check of stream requests.
 *
 * Rules: an origin that is not allowed is never reflected (its responses carry no
 * `Access-Control-Allow-*` header, so the browser blocks them); when the answer depends on the
 * request's `Origin` (a list or a function) every response carries
 * `Vary: Origin`, while one configured origin is answered as is to every request (the response
 * does not vary, and a browser on another origin blocks it); a preflight answers 204 with the
 * allowed methods, headers (the configured list, else the requested ones) and max age (default
 * 600 s), and `Vary: Origin`.
 *
 * @module
 */

import type { CorsOptions } from "../endpoint_types.ts";
import { DEFAULT_CORS_MAX_AGE } from "./_options.ts";
import { requestHeader } from "../_dispatch.ts";

export { checkCorsOptions, DEFAULT_CORS_MAX_AGE } from "./_options.ts";

/** The compiled `.cors()` policy of one route. Internal: built by the endpoint compiler. */
export class CorsPolicy {
  readonly #any: boolean;
  /** The one configured origin, answered to every request (the answer does not vary). */
  readonly #fixed: string | undefined;
  readonly #origins: ReadonlySet<string> | undefined;
  readonly #predicate: ((origin: string) => boolean) | undefined;
  readonly #credentials: boolean;
  readonly #allowHeaders: string | undefined;
  readonly #expose: string | undefined;
  readonly #maxAge: string;

  /**
   * @param options Checked options (see {@linkcode checkCorsOptions}).
   * @param exposeExtra Headers exposed in addition to `exposeHeaders` (the rate-limit headers).
   */
  constructor(options: CorsOptions, exposeExtra: readonly string[] = []) {
    const origin = options.origin ?? "*";
    this.#any = origin === "*";
    this.#fixed = typeof origin === "string" && origin !== "*" ? origin : undefined;
    this.#origins = typeof origin === "string"
      ? (origin === "*" ? undefined : new Set([origin]))
      : Array.isArray(origin)
      ? new Set(origin as readonly string[])
      : undefined;
    this.#predicate = typeof origin === "function" ? origin : undefined;
    this.#credentials = options.credentials === true;
    this.#allowHeaders = options.allowHeaders?.join(", ");
    const expose = [...(options.exposeHeaders ?? []), ...exposeExtra];
    this.#expose = expose.length ? expose.join(", ") : undefined;
    this.#maxAge = String(options.maxAge ?? DEFAULT_CORS_MAX_AGE);
  }

  /**
   * Whether a request origin is allowed.
   *
   * @param origin The `Origin` request header.
   * @returns True when allowed.
   */
  allows(origin: string): boolean {
    if (this.#any) return true;
    if (this.#origins !== undefined) return this.#origins.has(origin);
    try {
      return this.#predicate!(origin) === true;
    } catch {
      return false;
    }
  }

  /**
   * Whether a stream request may proceed: no `Origin`, the server's own origin (same host), or
   * an allowed origin. Cross-site WebSocket upgrades from other origins are refused with 403.
   *
   * @param req The SSE or upgrade request.
   * @returns True when the request may proceed.
   */
  admitsStream(req: Request): boolean {
    const origin = req.headers.get("origin");
    if (origin === null || this.allows(origin)) return true;
    const host = req.headers.get("host");
    if (host === null) return false;
    try {
      return new URL(origin).host === host.toLowerCase();
    } catch {
      return false;
    }
  }

  /**
   * Adds the CORS headers of an actual response.
   *
   * @param req The request (its `Origin` header).
   * @param headers The response headers (mutable).
   */
  decorate(req: Request, headers: Headers): void {
    let allowed: string;
    if (this.#fixed !== undefined) {
      // one configured origin: the same answer for every request, so no Vary is needed; a
      // browser on another origin sees a mismatch and blocks the response
      allowed = this.#fixed;
    } else if (this.#any) {
      allowed = "*";
    } else {
      headers.append("vary", "Origin");
      const origin = requestHeader(req, "origin");
      if (origin === null || !this.allows(origin)) return;
      allowed = origin;
    }
    headers.set("access-control-allow-origin", allowed);
    if (this.#credentials) headers.set("access-control-allow-credentials", "true");
    if (this.#expose !== undefined) headers.set("access-control-expose-headers", this.#expose);
  }

  /**
   * Answers a preflight request.
   *
   * @param req The `OPTIONS` request (with `Origin` and `Access-Control-Request-Method`).
   * @param methods The methods of the path that have CORS enabled.
   * @returns A 204 response.
   */
  preflight(req: Request, methods: readonly string[]): Response {
    const headers = new Headers({ allow: methods.join(", ") });
    const origin = req.headers.get("origin");
    if (!this.#any || this.#credentials) headers.set("vary", "Origin");
    if (origin === null || !this.allows(origin)) {
      return new Response(null, { status: 204, headers });
    }
    const requested = req.headers.get("access-control-request-headers");
    headers.set("access-control-allow-origin", this.#any && !this.#credentials ? "*" : origin);
    if (this.#credentials) headers.set("access-control-allow-credentials", "true");
    headers.set("access-control-allow-methods", methods.join(", "));
    const allowHeaders = this.#allowHeaders ?? requested ?? undefined;
    if (allowHeaders) headers.set("access-control-allow-headers", allowHeaders);
    if (this.#allowHeaders === undefined && requested !== null) {
      headers.append("vary", "Access-Control-Request-Headers");
    }
    headers.set("access-control-max-age", this.#maxAge);
    return new Response(null, { status: 204, headers });
  }
}
