/**
 * `deno task generate`: writes the static loaders (`.gen/`) of every example app and the browser
 * bundles the examples serve: `@fw/events/client` for the live example
 * (`examples/live/src/.gen/event_client.js`) and the shop dashboard's script, which calls the shop
 * through `@fw/application/client` (`examples/shop/src/.gen/dashboard.js`). With `--check` (a
 * step of `deno task ok`) it writes nothing and fails when one of them is out of date.
 *
 * @module
 */

import { main } from "@fw/application/cli";

const check = Deno.args.includes("--check");
const ROOT = new URL("../", import.meta.url).pathname;

/** The browser bundles the examples serve, committed beside their loaders: entry -> output. */
const BUNDLES: Record<string, string> = {
  "events/client.ts": "examples/live/src/.gen/event_client.js",
  "examples/shop/src/dashboard.ts": "examples/shop/src/.gen/dashboard.js",
};

/** Bundles `entry` for the browser into `out` (minified, deterministic). */
async function bundle(entry: string, out: string): Promise<void> {
  const { code, stderr } = await new Deno.Command(Deno.execPath(), {
    args: ["bundle", "--quiet", "--platform=browser", "--minify", entry, "-o", out],
    cwd: ROOT,
    stdout: "null",
    stderr: "piped",
  }).output();
  if (code !== 0) {
    console.error(`Cannot bundle ${entry}: ${new TextDecoder().decode(stderr)}`);
    Deno.exit(1);
  }
}

for (const [entry, target] of Object.entries(BUNDLES)) {
  if (check) {
    const dir = await Deno.makeTempDir({ prefix: "fw-generate-" });
    try {
      await bundle(entry, `${dir}/bundle.js`);
      const fresh = await Deno.readTextFile(`${dir}/bundle.js`);
      const committed = await Deno.readTextFile(`${ROOT}${target}`).catch(() => undefined);
      if (committed !== fresh) {
        console.error(
          `${target} is ${
            committed === undefined ? "missing" : "out of date"
          }: run \`deno task generate\``,
        );
        Deno.exit(1);
      }
    } finally {
      await Deno.remove(dir, { recursive: true });
    }
  } else {
    await Deno.mkdir(`${ROOT}${target.slice(0, target.lastIndexOf("/"))}`, { recursive: true });
    await bundle(entry, `${ROOT}${target}`);
    console.log(`generated ${ROOT}${target}`);
  }
}

// after the bundles: an example entry imports its bundle (as text), and generate imports the entry
const entries = [
  "examples/app/src/main.ts",
  "examples/streams/src/main.ts",
  "examples/shop/src/main.ts",
];
for (const entry of entries) {
  const code = await main(["generate", entry, ...(check ? ["--check"] : [])]);
  if (code !== 0) Deno.exit(code);
}
