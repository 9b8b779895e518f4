/**
 * Test helpers for `@fw/application` users and implementers: the router conformance suite.
 * Applications themselves are tested without a socket through `app.fetch()` / `app.request()`.
 *
 * @example
 * ```ts ignore
 * import { runRouterConformance } from "@fw/application/testing";
 * import { TrieRouter } from "@fw/application/router";
 * runRouterConformance("TrieRouter", () => new TrieRouter<string>());
 * ```
 *
 * @module
 */

export { runRouterConformance } from "./router/conformance.ts";
