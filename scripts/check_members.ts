/**
 * Checks every workspace member: `name`, `version`, `license` and `exports` are set, versions are in
 * lock-step, and every public file (not a test, bench, testdata or `.gen` file) is reachable from an
 * exports entry. Prints each problem and exits 1 when there is any.
 *
 * @module
 */

import { members } from "./_members.ts";

const problems: string[] = [];
const all = await members();
const versions = new Set<string>();

for (const { dir, config } of all) {
  for (const key of ["name", "version", "license", "exports"] as const) {
    if (!config[key]) problems.push(`${dir}/deno.json: "${key}" is missing`);
  }
  if (config.version) versions.add(config.version);
  if (config.license && config.license !== "MIT") {
    problems.push(`${dir}/deno.json: license must be "MIT", got "${config.license}"`);
  }
  const exp = config.exports ?? {};
  const entries = (typeof exp === "string" ? [exp] : Object.values(exp)).map((f) =>
    new URL(`../${dir}/${f.replace(/^\.\//, "")}`, import.meta.url).href
  );
  const reachable = new Set<string>();
  for (const entry of entries) {
    const out = await new Deno.Command(Deno.execPath(), {
      args: ["info", "--json", entry],
      stdout: "piped",
      stderr: "piped",
    }).output();
    if (!out.success) {
      problems.push(
        `${dir}: deno info failed for ${entry}: ${new TextDecoder().decode(out.stderr)}`,
      );
      continue;
    }
    const info = JSON.parse(new TextDecoder().decode(out.stdout));
    for (const m of info.modules ?? []) if (m.specifier) reachable.add(m.specifier);
  }
  const base = new URL(`../${dir}/`, import.meta.url);
  for await (const file of walk(base)) {
    if (!reachable.has(file.href)) {
      problems.push(
        `${dir}: ${file.href.slice(base.href.length)} is not reachable from any exports entry`,
      );
    }
  }
}
if (versions.size > 1) problems.push(`member versions differ: ${[...versions].join(", ")}`);

async function* walk(dir: URL): AsyncGenerator<URL> {
  for await (const e of Deno.readDir(dir)) {
    if (e.name.startsWith(".") || e.name === "testdata" || e.name === "node_modules") continue;
    const url = new URL(e.isDirectory ? `${e.name}/` : e.name, dir);
    if (e.isDirectory) yield* walk(url);
    else if (/\.(ts|tsx|js|mjs)$/.test(e.name) && !/_(test|bench)\.ts$/.test(e.name)) yield url;
  }
}

if (problems.length) {
  for (const p of problems) console.error(`check_members: ${p}`);
  Deno.exit(1);
}
console.log(`check_members: ${all.length} members ok`);
