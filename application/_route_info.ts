/**
 * The route pattern each request matched, recorded by the dispatcher when the application has
 * middlewares (so `telemetry()` can label its metrics with `http.route`). Internal.
 *
 * @module
 */

/** Matched route pattern by request (only filled when middlewares are installed). */
export const matchedRoutes: WeakMap<Request, string> = new WeakMap();
