/**
 * Helpers of the request dispatcher in `application.ts`: cutting the path out of a URL, the
 * request's async-context values and its trace id (from a valid W3C `traceparent` header,
 * otherwise freshly generated), HEAD bodies and percent-decoding of path parameters; and what the
 * dispatcher knows about a request that other parts read: its headers without the `Headers`
 * object (`requestHeader()`), the context providers of middlewares such as `oauth()`, and the
 * route pattern it matched (`matchedRoute()`, for `telemetry()`). Internal, except
 * `matchedRoute()`. One module rather than four: each module on the start-up path costs a cold
 * start about 0.5 M instructions whatever its size.
 *
 * Request headers: once `req.headers` has been read, `Deno.serve` copies every request header
 * before it closes the request and finishes the response through a promise instead of on its
 * synchronous fast path (a handler may still read the headers after its response). Reading
 * `Accept` for content negotiation that way cost 5-7% of throughput on a validated GET. A request
 * from `Deno.serve` keeps its connection's request under a symbol whose `header(name)` reads one
 * header straight from the server (the same call `req.headers.get()` ends up in, values of
 * repeated headers joined alike), so fw reads the headers it needs there and leaves
 * `req.headers` untouched. Any other request (built with `new Request()`, or one whose server
 * request is gone) and any runtime without that member use `req.headers.get()` as before.
 *
 * Context providers: middlewares whose only job is to add values to the request's async context
 * (`oauth()` adds `user`). Each registers, beside its ordinary {@linkcode Middleware} form, a
 * function that returns those values directly; the dispatcher then merges them into the request's
 * context object without a middleware frame, a promise or a second context frame, so a request
 * whose token is already verified stays fully synchronous.
 *
 * Matched route: the route pattern a request matched (recorded when the application has
 * middlewares, so metrics and spans are labelled with `http.route`), and the server spans that a
 * stream connection ends itself when it closes.
 *
 * @module
 */

import type { Middleware, Span } from "@fw/runtime";
import { jsonError } from "./_errors.ts";

/**
 * The path of a request URL, without building a `URL`.
 *
 * @param url The request URL.
 * @returns The path, still percent-encoded.
 */
export function pathOf(url: string): string {
  const start = url.indexOf("/", url.indexOf("//") + 2);
  if (start === -1) return "/";
  // The path ends at `?` or `#` (a request from `Deno.serve` has no fragment; a hand-made one may).
  let end = url.indexOf("?", start);
  const hash = url.indexOf("#", start);
  if (hash !== -1 && (end === -1 || hash < end)) end = hash;
  return end === -1 ? url.slice(start) : url.slice(start, end);
}

let lastRequest: Request | undefined;
let lastUrl = "";

/**
 * `req.url`, remembered for the last request asked about: the dispatcher and the endpoint's
 * context read the URL of the same request one after the other, and the runtime's getter checks
 * its receiver and rebuilds nothing but still costs a call across its bindings each time.
 *
 * @param req The request.
 * @returns Its URL.
 */
export function urlOf(req: Request): string {
  if (req === lastRequest) return lastUrl;
  lastUrl = req.url;
  lastRequest = req;
  return lastUrl;
}

/**
 * The async-context values of a request: `request`, and `traceId` computed on first use (a
 * prototype getter, so creating the values costs one small object). Nested `runInContext()`
 * scopes keep the prototype, so they see the same trace id.
 *
 * Once its response is ready a compiled endpoint calls `release()`: the async context frame
 * outlives the request (promises created during it keep it), and a frame that still held the
 * request kept its whole object graph alive through garbage collections, which cost more than
 * the rest of the request. A trace id first asked for after that (work that outlives the
 * response) is a new one.
 */
export class RequestValues {
  /** The request, until `release()`. */
  request: Request | undefined;
  /** The trace id, once fixed without the request. */
  _traceId: string | undefined = undefined;

  constructor(request: Request) {
    this.request = request;
  }

  get traceId(): string {
    const req = this.request;
    if (req !== undefined) return traceIdOf(req);
    return this._traceId ??= newTraceId();
  }

  /** Drops the request, keeping the trace id if it was computed. */
  release(): void {
    const req = this.request;
    if (req === undefined) return;
    this._traceId = knownTraceId(req);
    this.request = undefined;
  }
}

/** The response of a HEAD request: the same status and headers, no body. */
export function stripBody(res: Response): Response {
  res.body?.cancel().catch(() => {});
  return new Response(null, {
    status: res.status,
    statusText: res.statusText,
    headers: res.headers,
  });
}

/**
 * The name of a pattern's catch-all parameter (`/files/*path` -> `path`), or `undefined`.
 *
 * @param pattern A route pattern.
 * @returns The name.
 */
export function catchAllOf(pattern: string): string | undefined {
  return /\*(\w+)$/.exec(pattern)?.[1];
}

/**
 * Percent-decodes path parameters (only those that need it); a 400 response for malformed
 * encoding, a NUL, or `.`/`..` segments in a catch-all.
 */
export function decodeParams(
  raw: Record<string, string>,
  catchAll: string | undefined,
): Record<string, string> | Response {
  let out: Record<string, string> | undefined;
  for (const key in raw) {
    const encoded = raw[key];
    if (key !== catchAll && !encoded.includes("%")) continue; // nothing to decode: keep as is
    let value: string;
    try {
      value = decodeURIComponent(encoded);
    } catch {
      return jsonError(400, `Malformed percent-encoding in path parameter "${key}"`);
    }
    if (value.includes("\0")) {
      return jsonError(400, `Path parameter "${key}" contains a NUL character`);
    }
    if (key === catchAll) {
      const segments = encoded.split("/").map((s) => {
        try {
          return decodeURIComponent(s);
        } catch {
          return s;
        }
      });
      if (segments.some((s) => s === ".." || s === "." || s.includes("/") || s.includes("\\"))) {
        return jsonError(400, `Path parameter "${key}" must not contain "." or ".." segments`);
      }
    }
    (out ??= { ...raw })[key] = value;
  }
  return out ?? raw;
}

// Trace ids

const TRACEPARENT = /^[0-9a-f]{2}-([0-9a-f]{32})-[0-9a-f]{16}-[0-9a-f]{2}$/;
const ZERO = "0".repeat(32);

/** A random 32-hex-digit trace id. */
export function newTraceId(): string {
  const bytes = crypto.getRandomValues(new Uint8Array(16));
  let out = "";
  for (const b of bytes) out += (b < 16 ? "0" : "") + b.toString(16);
  return out;
}

const cache = new WeakMap<Request, string>();

/**
 * The trace id of a request (stable for the request's lifetime).
 *
 * @param req The request.
 * @returns 32 lower-case hex digits.
 */
export function traceIdOf(req: Request): string {
  let id = cache.get(req);
  if (id) return id;
  const m = TRACEPARENT.exec(requestHeader(req, "traceparent")?.trim().toLowerCase() ?? "");
  id = m && m[1] !== ZERO ? m[1] : newTraceId();
  cache.set(req, id);
  return id;
}

/**
 * The trace id of a request if one was already computed, without computing it.
 *
 * @param req The request.
 * @returns The trace id, or `undefined`.
 */
export function knownTraceId(req: Request): string | undefined {
  return cache.get(req);
}

/**
 * Fixes the trace id of a request (the trace of its server span, when tracing is on), so the
 * context's `traceId`, log lines and published messages name the same trace as the span.
 *
 * @param req The request.
 * @param id 32 lower-case hex digits.
 */
export function setTraceId(req: Request, id: string): void {
  cache.set(req, id);
}

// Request headers

interface ServerRequest {
  header(name: string): string | null;
}

/** The symbol of a request's inner request: looked up on the first request, `null` if absent. */
let innerKey: symbol | null | undefined;

function keyOf(req: Request): symbol | null {
  for (const key of Object.getOwnPropertySymbols(req)) {
    if (key.description === "request") return key;
  }
  return null;
}

/**
 * The value of one request header, as `req.headers.get(name)` returns it.
 *
 * @param req The request.
 * @param name The header name, in lower case.
 * @returns The value, or `null` when the request has no such header.
 */
export function requestHeader(req: Request, name: string): string | null {
  const key = innerKey === undefined ? (innerKey = keyOf(req)) : innerKey;
  if (key !== null) {
    const inner = (req as unknown as Record<symbol, ServerRequest | undefined>)[key];
    if (inner !== undefined && typeof inner.header === "function") {
      try {
        return inner.header(name);
      } catch {
        // the server request is closed: fall through
      }
    }
  }
  return req.headers.get(name);
}

// Context providers

/** Values to add to the request's context, none, or a promise of either. */
export type ContextProvider = (
  req: Request,
) => object | undefined | Promise<object | undefined>;

/** The provider form of registered middlewares. */
export const contextProviders: WeakMap<Middleware, ContextProvider> = new WeakMap();

// Matched route

/**
 * The key of a request's matched route pattern (only set when middlewares are installed): a
 * property of the request itself, not a `WeakMap` entry, since an entry per request fills the
 * map with ephemerons, which make every young-generation collection dearer.
 */
const ROUTE: unique symbol = Symbol("fw.matchedRoute");

/**
 * Records the route pattern a request matched.
 *
 * @param req The request.
 * @param pattern The pattern.
 */
export function setMatchedRoute(req: Request, pattern: string): void {
  (req as Request & { [ROUTE]?: string })[ROUTE] = pattern;
}

/**
 * Server spans taken over by a stream connection: the span lasts for the connection's life, so
 * the HTTP middleware must not end it when the response (the upgrade or the event stream) is
 * returned.
 */
export const streamSpans: WeakSet<Span> = new WeakSet();
/**
 * The route pattern a request matched, such as `/users/:id` (never the raw path). It is known
 * once the router has run, and only when the application has a middleware (plugins that label
 * metrics by route add one), so read it after `next()` in a middleware.
 *
 * @param req The request.
 * @returns The pattern, or `undefined` when no route matched (or no middleware is installed).
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { application, matchedRoute, type Plugin } from "@fw/application";
 * let seen: string | undefined;
 * const plugin: Plugin = {
 *   name: "probe",
 *   setup(ctx) {
 *     ctx.addMiddleware(async (req, _info, next) => {
 *       const res = await next();
 *       seen = matchedRoute(req);
 *       return res;
 *     });
 *     ctx.addRoute({ method: "GET", path: "/users/:id", handler: () => new Response("ok") });
 *   },
 * };
 * const app = application().use(plugin);
 * await app.request("/users/7");
 * assert.equal(seen, "/users/:id");
 * ```
 */
export function matchedRoute(req: Request): string | undefined {
  return (req as Request & { [ROUTE]?: string })[ROUTE];
}
