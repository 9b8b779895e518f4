import assert from "node:assert/strict";
import { loadModules, renderLoader } from "./loader.ts";

const LOADER = new URL("./loader.ts", import.meta.url).href;

/**
 * Runs `loadModules(dir, "mods", "mods")` in a process that may read only `readable`, and returns
 * what it printed (the result, or the error message).
 */
async function loadWithReadAccess(dir: string, readable: string[]): Promise<string> {
  const script = `${dir}/probe.ts`;
  await Deno.writeTextFile(
    script,
    `import { loadModules } from ${JSON.stringify(LOADER)};
try {
  const r = await loadModules(${JSON.stringify(dir)}, "mods", "mods", () => true);
  console.log(JSON.stringify({ source: r?.source, stale: r?.stale, files: Object.keys(r?.modules ?? {}) }));
} catch (error) {
  console.log(String(error));
}`,
  );
  const { stdout } = await new Deno.Command(Deno.execPath(), {
    args: ["run", "--no-config", `--allow-read=${readable.join(",")}`, script],
    stdout: "piped",
    stderr: "null",
  }).output();
  return new TextDecoder().decode(stdout).trim();
}

async function fixture(): Promise<string> {
  const dir = await Deno.makeTempDir({ prefix: "fw-loader-" });
  await Deno.mkdir(`${dir}/mods`);
  await Deno.mkdir(`${dir}/.gen`);
  await Deno.writeTextFile(`${dir}/mods/a.ts`, "export const a = 1;\n");
  return dir;
}

Deno.test("loadModules() uses the generated loader unchecked when the folder cannot be read", async () => {
  const dir = await fixture();
  try {
    await Deno.writeTextFile(`${dir}/.gen/mods.gen.ts`, renderLoader("mods", ["a.ts"]));
    // the loader and the module it imports, but not the folder itself
    const out = await loadWithReadAccess(dir, [`${dir}/.gen`, `${dir}/mods/a.ts`]);
    assert.deepEqual(JSON.parse(out), { source: "loader", stale: false, files: ["a.ts"] });
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("loadModules() names the folder and the missing loader when it can read neither", async () => {
  const dir = await fixture();
  try {
    const out = await loadWithReadAccess(dir, [`${dir}/.gen`]);
    assert.match(out, /^Error: Cannot read ".*\/mods" \(no read permission\) and there is no/);
    assert.match(out, /mods\.gen\.ts": run generate/);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("loadModules() scans instead of a loader that is out of date with a readable folder", async () => {
  const dir = await fixture();
  try {
    await Deno.writeTextFile(`${dir}/mods/b.ts`, "export const b = 2;\n");
    await Deno.writeTextFile(`${dir}/.gen/mods.gen.ts`, renderLoader("mods", ["a.ts"]));
    const r = await loadModules(dir, "mods", "mods", () => true);
    assert.equal(r?.source, "scan");
    assert.equal(r?.stale, true);
    assert.deepEqual(Object.keys(r!.modules), ["a.ts", "b.ts"]);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});
