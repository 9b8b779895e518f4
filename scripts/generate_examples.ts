/**
 * `deno task generate`: writes the static loaders (`.gen/`) of every example app. With `--check`
 * (a step of `deno task ok`) it writes nothing and fails when one of them is out of date.
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
  const code = await main(["generate", entry, ...Deno.args.filter((a) => a === "--check")]);
  if (code !== 0) Deno.exit(code);
}
