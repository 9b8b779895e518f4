/**
 * For `bench:startup --js`: writes a copy of a program's local modules as plain JavaScript, one
 * `.js` file per `.ts` module, with the same imports between them (each rewritten to the copy's
 * path), so that a cold start of the copy differs from that of the original only in what Deno
 * does to load TypeScript (read the cached emit, with its inline source map). The copy goes under
 * `.tmp/` in the repository, so the same `deno.json` (import map, lock file, unstable flags) applies
 * to both; npm and `node:` imports are left as they are.
 *
 * The transpiler is esbuild (`npm:esbuild`, what `deno bundle` runs), types stripped, nothing else
 * changed: comments stay, so the bytes V8 reads are those of the emit minus its source map.
 *
 * @module
 */

import { stop, transform } from "esbuild";

/** A module of `deno info --json`. */
interface InfoModule {
  specifier: string;
  dependencies?: { specifier: string; code?: { specifier?: string } }[];
}

/**
 * Writes the JavaScript copy of the program whose entry is `entry`.
 *
 * @param root The repository root (a `file:` URL ending in `/`).
 * @param entry The entry, relative to `root`.
 * @param out The folder for the copy, relative to `root` (emptied first).
 * @returns The copy's entry, relative to `root`.
 */
export async function writeAsJs(root: URL, entry: string, out: string): Promise<string> {
  const info = await new Deno.Command(Deno.execPath(), {
    args: ["info", "--json", entry],
    cwd: root.pathname,
    stdout: "piped",
    stderr: "inherit",
  }).output();
  if (!info.success) throw new Error(`deno info ${entry} failed`);
  const modules = (JSON.parse(new TextDecoder().decode(info.stdout)) as { modules: InfoModule[] })
    .modules;
  const base = root.href;
  const outDir = new URL(`${out.replace(/\/$/, "")}/`, root);
  await Deno.remove(outDir, { recursive: true }).catch(() => {});
  const jsPath = (rel: string) => rel.replace(/\.ts$/, ".js");
  for (const m of modules) {
    if (!m.specifier.startsWith(base)) continue;
    const rel = m.specifier.slice(base.length);
    let source = await Deno.readTextFile(new URL(rel, root));
    const up = "../".repeat(jsPath(rel).split("/").length - 1);
    for (const d of m.dependencies ?? []) {
      const target = d.code?.specifier;
      if (target === undefined || !target.startsWith(base)) continue;
      const to = up + jsPath(target.slice(base.length));
      source = source.replaceAll(`"${d.specifier}"`, `"${to.startsWith(".") ? to : `./${to}`}"`);
    }
    const code = rel.endsWith(".ts")
      ? (await transform(source, { loader: "ts", format: "esm", target: "esnext" })).code
      : source;
    const file = new URL(jsPath(rel), outDir);
    await Deno.mkdir(new URL(".", file), { recursive: true });
    await Deno.writeTextFile(file, code);
  }
  return `${out.replace(/\/$/, "")}/${jsPath(entry)}`;
}

/** Stops esbuild's service process (call once the copies are written). */
export async function stopTranspiler(): Promise<void> {
  await stop();
}
