/**
 * The route pattern each request matched, recorded by the dispatcher when the application has
 * middlewares (so `telemetry()` can label its metrics with `http.route`). Internal.
 *
 * @module
 */

/** Matched route pattern by request (only filled when middlewares are installed). */
export const matchedRoutes: WeakMap<Request, string> = new WeakMap();

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
  return matchedRoutes.get(req);
}
