/**
 * The option checks of the route policies `.cors()` and `.rateLimit()`, which `endpoint()` runs
 * when a route is declared. Kept apart from the policies themselves (`cors.ts`, `rate_limit.ts`,
 * `_route_policies.ts`), which load at warmup only when a route declares a policy.
 *
 * @module
 */

import type { CorsOptions, RateLimitOptions } from "../endpoint_types.ts";

/** Default `Access-Control-Max-Age` of a preflight, in seconds. */
export const DEFAULT_CORS_MAX_AGE = 600;

const CORS_KEYS = new Set(["origin", "credentials", "allowHeaders", "exposeHeaders", "maxAge"]);
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
    if (!CORS_KEYS.has(key)) fail(`unknown option "${key}" (known: ${[...CORS_KEYS].join(", ")})`);
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

/** The response headers a rate-limited route sets (exposed to browsers on CORS routes). */
export const RATE_LIMIT_HEADERS: readonly string[] = Object.freeze([
  "RateLimit-Limit",
  "RateLimit-Remaining",
  "RateLimit-Reset",
  "Retry-After",
]);

const RATE_LIMIT_KEYS = new Set(["max", "windowMs", "store", "key"]);

/**
 * Checks `.rateLimit()` options.
 *
 * @param options The options given to `.rateLimit()`.
 * @returns The frozen options.
 * @throws {RangeError} When `max` is not a positive integer or `windowMs` not a positive number.
 * @throws {TypeError} For an unknown option, a `store` without `hit()` or a `key` that is not a
 *   function.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { checkRateLimitOptions } from "@fw/application";
 * assert.equal(checkRateLimitOptions({ max: 10, windowMs: 60_000 }).max, 10);
 * assert.throws(() => checkRateLimitOptions({ max: 0, windowMs: 1000 }), /"max"/);
 * ```
 */
export function checkRateLimitOptions(options: RateLimitOptions): RateLimitOptions {
  if (typeof options !== "object" || options === null) {
    throw new TypeError("Invalid .rateLimit() options: expected { max, windowMs }");
  }
  for (const key of Object.keys(options)) {
    if (!RATE_LIMIT_KEYS.has(key)) {
      throw new TypeError(
        `Invalid .rateLimit() options: unknown option "${key}" (known: ${
          [...RATE_LIMIT_KEYS].join(", ")
        })`,
      );
    }
  }
  const { max, windowMs, store, key } = options;
  if (!Number.isInteger(max) || max < 1) {
    throw new RangeError(
      `Invalid .rateLimit() option "max": expected a positive integer, got ${max}`,
    );
  }
  if (typeof windowMs !== "number" || !Number.isFinite(windowMs) || windowMs <= 0) {
    throw new RangeError(
      `Invalid .rateLimit() option "windowMs": expected a positive number, got ${windowMs}`,
    );
  }
  if (store !== undefined && typeof (store as { hit?: unknown })?.hit !== "function") {
    throw new TypeError(
      'Invalid .rateLimit() option "store": expected a RateLimitStore (an object with hit())',
    );
  }
  if (key !== undefined && typeof key !== "function") {
    throw new TypeError('Invalid .rateLimit() option "key": expected a function');
  }
  return Object.freeze({ ...options });
}
