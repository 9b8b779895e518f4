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

/** Default `Access-Control-Max-Age` of a preflight, in seconds. */
export const DEFAULT_CORS_MAX_AGE = 600;

const KEYS = new Set(["origin", "credentials", "allowHeaders", "exposeHeaders", "maxAge"]);
const TOKEN = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/;

function fail(detail: string): never {
  throw new TypeError(`Invalid .cors() options: ${detail}`);
}

function checkOrigin(value: string): string {
  if (value === "*") return value;
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    fail(`"origin" entry "${value}" is not an origin (expected scheme://host[:port])`);
  }
  if (url.origin === "null" || url.origin !== value) {
    fail(
      `"origin" entry "${value}" is not an origin (expected scheme://host[:port] with no path or trailing slash, such as "${url.origin}")`,
    );
  }
  return value;
}

function headerList(value: unknown, name: string): readonly string[] {
  if (!Array.isArray(value) || value.some((h) => typeof h !== "string" || !TOKEN.test(h))) {
    fail(`"${name}" must be an array of header names`);
  }
  return Object.freeze([...value]);
}

/**
 * Checks `.cors()` options and returns them normalised (`origin` defaults to `"*"`).
 *
 * @param options The options given to `.cors()`.
 * @returns The frozen, checked options.
 * @throws {TypeError} For an unknown option, an origin that is not `scheme://host[:port]`, a `"*"`
 *   mixed into a list or combined with `credentials: true`, header names that are not tokens, or a
 *   `maxAge` that is not a non-negative integer.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { checkCorsOptions } from "@fw/application";
 * assert.equal(checkCorsOptions({}).origin, "*");
 * assert.throws(() => checkCorsOptions({ origin: "https://app.example/" }), /not an origin/);
 * ```
 */
export function checkCorsOptions(options: CorsOptions = {}): CorsOptions {
  if (typeof options !== "object" || options === null || Array.isArray(options)) {
    fail("expected an object");
  }
  for (const key of Object.keys(options)) {
    if (!KEYS.has(key)) fail(`unknown option "${key}" (known: ${[...KEYS].join(", ")})`);
  }
  const origin = options.origin ?? "*";
  if (typeof origin === "string") checkOrigin(origin);
  else if (Array.isArray(origin)) {
    if (origin.length === 0) fail(`"origin" must not be an empty list`);
    for (const o of origin) {
      if (typeof o !== "string") fail(`"origin" list entries must be strings`);
      if (o === "*") fail(`"origin" list cannot contain "*": use origin: "*" alone`);
      checkOrigin(o);
    }
  } else if (typeof origin !== "function") {
    fail(`"origin" must be a string, a list of strings or a function`);
  }
  if (options.credentials !== undefined && typeof options.credentials !== "boolean") {
    fail(`"credentials" must be a boolean`);
  }
  if (origin === "*" && options.credentials === true) {
    fail('origin "*" cannot be used with credentials: true');
  }
  const maxAge = options.maxAge;
  if (maxAge !== undefined && (!Number.isInteger(maxAge) || maxAge < 0)) {
    fail(`"maxAge" must be a non-negative integer (seconds), got ${maxAge}`);
  }
  const out: { -readonly [K in keyof CorsOptions]: CorsOptions[K] } = {
    ...options,
    origin: Array.isArray(origin) ? Object.freeze([...origin]) : origin,
  };
  if (options.allowHeaders !== undefined) {
    out.allowHeaders = headerList(options.allowHeaders, "allowHeaders");
  }
  if (options.exposeHeaders !== undefined) {
    out.exposeHeaders = headerList(options.exposeHeaders, "exposeHeaders");
  }
  return Object.freeze(out);
}

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
      const origin = req.headers.get("origin");
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
