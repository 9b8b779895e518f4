/**
 * What the dispatcher and the stream compiler tell `telemetry()` about a request: the route
 * pattern it matched (recorded when the application has middlewares, so metrics and spans are
 * labelled with `http.route`), and the server spans that a stream connection ends itself when it
 * closes. Internal.
 *
 * @module
 */

import type { Span } from "@fw/runtime";

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
