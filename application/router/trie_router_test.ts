import { runRouterConformance } from "./conformance.ts";
import { TrieRouter } from "./trie_router.ts";

runRouterConformance("TrieRouter", () => new TrieRouter<string>());
