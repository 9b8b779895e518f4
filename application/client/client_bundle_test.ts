/**
 * `@fw/application/client` is browser-safe and small: its module graph (code and types) is its
 * own folder and nothing else, none of it names `Deno.`, and its minified browser bundle stays
 * within 6 KB.
 */

import assert from "node:assert/strict";

const ROOT = new URL("../../", import.meta.url);
const ENTRY = new URL("application/client.ts", ROOT).pathname;
/** The size budget of the minified browser bundle, in bytes. */
const BUDGET = 6 * 1024;

async function run(args: string[]): Promise<string> {
  const out = await new Deno.Command(Deno.execPath(), { args, stdout: "piped", stderr: "piped" })
    .output();
  assert.ok(out.success, new TextDecoder().decode(out.stderr));
  return new TextDecoder().decode(out.stdout);
}

Deno.test("@fw/application/client loads only its own folder, and no module of it uses Deno.*", async () => {
  const { modules } = JSON.parse(await run(["info", "--json", ENTRY])) as {
    modules: { specifier: string }[];
  };
  const names = modules.map((m) => m.specifier.replace(ROOT.href, "")).sort();
  assert.deepEqual(
    names.filter((n) => n !== "application/client.ts" && !n.startsWith("application/client/")),
    [],
    "no server code, no runtime member, no npm package",
  );
  assert.ok(names.includes("application/client/api_client.ts"), names.join("\n"));
  for (const { specifier } of modules) {
    assert.doesNotMatch(await Deno.readTextFile(new URL(specifier)), /\bDeno\./, specifier);
  }
});

Deno.test("@fw/application/client bundles for browsers within 6 KB minified, exporting apiClient", async () => {
  const dir = await Deno.makeTempDir({ prefix: "fw-api-client-" });
  try {
    const out = `${dir}/client.js`;
    await run(["bundle", "--quiet", "--platform=browser", "--minify", ENTRY, "-o", out]);
    const js = await Deno.readTextFile(out);
    const bytes = new TextEncoder().encode(js).length;
    console.log(
      `@fw/application/client browser bundle: ${bytes} bytes minified (budget ${BUDGET})`,
    );
    assert.ok(bytes <= BUDGET, `bundle too large: ${bytes} bytes, budget ${BUDGET}`);
    const mod = await import(`data:text/javascript;base64,${btoa(js)}`);
    assert.deepEqual(Object.keys(mod).sort(), ["ApiStreamError", "apiClient"]);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});
