/**
 * The example app `deno task dev` runs. The HTTP half lands with the HTTP core issue; until then
 * this prints what is available and exits.
 *
 * @module
 */
import { Int } from "@fw/runtime";

console.log(
  `fw example app: the runtime is ready (Int schema kind: ${Int.node.kind}); HTTP routes arrive next`,
);
