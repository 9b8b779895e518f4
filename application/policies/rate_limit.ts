/**
 * The rate-limit policy of one route (`.rateLimit({ max, windowMs })`): option checks at
 * start-up, the client key, the count, the 429 answer and the `RateLimit-*` headers.
 *
 * The key is the route plus the client address: the peer address, or, when `http({ trustProxy })`
 * trusts that peer, the address the trusted proxies report (`Forwarded` or `X-Forwarded-For`,
 * walked from the right; entries a client wrote itself are never believed). Every response of the route carries
 * `RateLimit-Limit`, `RateLimit-Remaining` and `RateLimit-Reset` (seconds); a request over the
 * limit gets 429 in the error shape with `Retry-After` (seconds).
 *
 * @module
 */

import type { AppContext, HttpSettings, RequestInfo } from "@fw/runtime";
import { clientFacts } from "../_proxy.ts";
import { jsonError } from "../_errors.ts";
import type { RateLimitOptions } from "../endpoint_types.ts";
import { MemoryRateLimitStore, type RateLimitHit } from "./rate_limit_store.ts";

export { checkRateLimitOptions, RATE_LIMIT_HEADERS } from "./_options.ts";

/**
 * The client address used as the rate-limit key: the peer address, or the address the trusted
 * proxies report; `"unknown"` when neither is known (for example under `app.fetch()` without
 * `remoteAddr`).
 *
 * @param req The request.
 * @param info Connection facts.
 * @param http The HTTP settings (proxy trust).
 * @returns The address.
 */
export function clientAddress(req: Request, info: RequestInfo, http: HttpSettings): string {
  return clientFacts(req, info, http).address;
}

/** One counted request: the numbers for the headers, and whether it is over the limit. */
export interface RateLimitResult {
  /** True when the request is over the limit (answer 429). */
  readonly limited: boolean;
  /** `RateLimit-Remaining`. */
  readonly remaining: number;
  /** `RateLimit-Reset` and `Retry-After`, in whole seconds. */
  readonly resetSeconds: number;
}

/** The compiled `.rateLimit()` policy of one route. Internal: built by the endpoint compiler. */
export class RateLimitPolicy {
  readonly #max: number;
  readonly #limit: string;
  readonly #windowMs: number;
  readonly #prefix: string;
  readonly #app: AppContext;
  readonly #key: RateLimitOptions["key"];
  /** The store; the default memory store answers synchronously. */
  readonly store: RateLimitOptions["store"] & object;
  /** True when `store.hit()` never returns a promise (the default store). */
  readonly sync: boolean;

  /**
   * @param options Checked options.
   * @param label `METHOD /route`, the first part of every key.
   * @param app The application (clock, proxy trust).
   */
  constructor(options: RateLimitOptions, label: string, app: AppContext) {
    this.#max = options.max;
    this.#limit = String(options.max);
    this.#windowMs = options.windowMs;
    this.#prefix = `${label}|`;
    this.#app = app;
    this.#key = options.key;
    this.store = options.store ?? new MemoryRateLimitStore({ clock: app.clock });
    this.sync = this.store instanceof MemoryRateLimitStore;
  }

  /**
   * Counts the request.
   *
   * @param req The request.
   * @param info Connection facts.
   * @returns The result, synchronously for the memory store.
   */
  hit(req: Request, info: RequestInfo): RateLimitResult | Promise<RateLimitResult> {
    const address = clientAddress(req, info, this.#app.http);
    const key = this.#prefix + (this.#key === undefined ? address : this.#key(req, address));
    const hit = this.store.hit(key, this.#windowMs);
    return hit instanceof Promise ? hit.then((h) => this.#result(h)) : this.#result(hit);
  }

  #result(hit: RateLimitHit): RateLimitResult {
    return {
      limited: hit.count > this.#max,
      remaining: Math.max(0, this.#max - hit.count),
      resetSeconds: Math.max(0, Math.ceil(hit.resetMs / 1000)),
    };
  }

  /**
   * Sets the `RateLimit-*` headers.
   *
   * @param result The counted request.
   * @param headers The response headers (mutable).
   */
  decorate(result: RateLimitResult, headers: Headers): void {
    headers.set("ratelimit-limit", this.#limit);
    headers.set("ratelimit-remaining", String(result.remaining));
    headers.set("ratelimit-reset", String(result.resetSeconds));
  }

  /**
   * The 429 answer.
   *
   * @param result The counted request (over the limit).
   * @returns The response, in the error shape, with `Retry-After`.
   */
  tooMany(result: RateLimitResult): Response {
    const retry = String(Math.max(1, result.resetSeconds));
    return jsonError(
      429,
      `Rate limit exceeded: at most ${this.#max} requests per ${this.#windowMs} ms; retry in ${retry} s`,
      { "retry-after": retry },
    );
  }
}
