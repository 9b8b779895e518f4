/**
 * Routers for `@fw/application`: the {@linkcode Router} interface and the default
 * {@linkcode TrieRouter}. Pass another implementation with `application({ router })`; every
 * implementation must pass `runRouterConformance` from `@fw/application/testing`.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { TrieRouter } from "@fw/application/router";
 * const router = new TrieRouter<string>();
 * router.add("GET", "/files/*path", "files");
 * assert.deepEqual(router.find("GET", "/files/a/b")?.params, { path: "a/b" });
 * ```
 *
 * @module
 */

export { parsePattern, type RouteMatch, type Router } from "./router.ts";
export { TrieRouter } from "./trie_router.ts";
