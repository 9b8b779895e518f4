/**
 * `deno task generate`: writes the static loaders (`.gen/`) of every example app.
 *
 * @module
 */

import { main } from "@fw/application/cli";

const entries = [
  "examples/app/src/main.ts",
  "examples/streams/src/main.ts",
  "examples/shop/src/main.ts",
];
for (const entry of entries) {
  const code = await main(["generate", entry]);
  if (code !== 0) Deno.exit(code);
}
