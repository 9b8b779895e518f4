/**
 * `deno task generate`: writes the static loaders (`.gen/`) of every example app and the browser
 * bundle of `@fw/events/client` that the live example serves
 * (`examples/live/src/.gen/event_client.js`). With `--check` (a step of `deno task ok`) it writes
 * nothing and fails when one of them is out of date.
 *
 * @module
 */

import { main } from "@fw/application/cli";

const check = Deno.args.includes("--check");
const ROOT = new URL("../", import.meta.url).pathname;

const entries = [
  "examples/app/src/main.ts",
  "examples/streams/src/main.ts",
  "examples/shop/src/main.ts",
];
for (const entry of entries) {
  const code = await main(["generate", entry, ...(check ? ["--check"] : [])]);
  if (code !== 0) Deno.exit(code);
}

/** Where the live example's committed client bundle lives. */
const CLIENT_BUNDLE = `${ROOT}examples/live/src/.gen/event_client.js`;

/** Bundles `events/client.ts` for the browser into `out` (minified, deterministic). */
async function bundleClient(out: string): Promise<void> {
  const { code, stderr } = await new Deno.Command(Deno.execPath(), {
    args: ["bundle", "--quiet", "--platform=browser", "--minify", "events/client.ts", "-o", out],
    cwd: ROOT,
    stdout: "null",
    stderr: "piped",
  }).output();
  if (code !== 0) {
    console.error(`Cannot bundle events/client.ts: ${new TextDecoder().decode(stderr)}`);
    Deno.exit(1);
  }
}

if (check) {
  const dir = await Deno.makeTempDir({ prefix: "fw-generate-" });
  try {
    await bundleClient(`${dir}/event_client.js`);
    const fresh = await Deno.readTextFile(`${dir}/event_client.js`);
    const committed = await Deno.readTextFile(CLIENT_BUNDLE).catch(() => undefined);
    if (committed !== fresh) {
      console.error(
        `examples/live/src/.gen/event_client.js is ${
          committed === undefined ? "missing" : "out of date"
        }: run \`deno task generate\``,
      );
      Deno.exit(1);
    }
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
} else {
  await Deno.mkdir(`${ROOT}examples/live/src/.gen`, { recursive: true });
  await bundleClient(CLIENT_BUNDLE);
  console.log(`generated ${CLIENT_BUNDLE}`);
}
