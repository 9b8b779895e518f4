import assert from "node:assert/strict";
import { runRouterConformance } from "./conformance.ts";
import { TrieRouter } from "./trie_router.ts";

runRouterConformance("TrieRouter", () => new TrieRouter<string>());

Deno.test("a parameter named __proto__ is an ordinary own property", () => {
  const r = new TrieRouter<string>();
  r.add("GET", "/x/:__proto__", "x");
  const params = r.find("GET", "/x/7")!.params;
  assert.equal(Object.getPrototypeOf(params), Object.prototype);
  assert.deepEqual(Object.entries(params), [["__proto__", "7"]]);
});
