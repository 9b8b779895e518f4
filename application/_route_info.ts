/**
 * What the dispatcher and the stream compiler tell `telemetry()` about a request: the route
 * pattern it matched (recorded when the application has middlewares, so metrics and spans are
 * labelled with `http.route`), and the server spans that a stream connection ends itself when it
 * closes. Internal.
 *
 * @module
 */

import type { Span } from "@fw/runtime";

/** Matched route pattern by request (only filled when middlewares are installed). */
export const matchedRoutes: WeakMap<Request, string> = new WeakMap();

/**
 * Server spans taken over by a stream connection: the span lasts for the connection's life, so
 * the HTTP middleware must not end it when the response (the upgrade or the event stream) is
 * returned.
 */
export const streamSpans: WeakSet<Span> = new WeakSet();
