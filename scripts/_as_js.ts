/**
 * For `bench:startup --js`: writes a copy of a program's local modules as plain JavaScript, one
 * `.js` file per `.ts` module, so that a cold start of the copy differs from that of the original
 * only in what Deno does to load TypeScript. Each file is Deno's own emit of the module (the code
 * V8 runs, comments included, read from Deno's emit cache, `deno info`'s `typescriptCache`) with
 * its inline source map and cache note removed; its imports are rewritten to the copy's paths, and
 * bare specifiers that a workspace member's import map resolves (`yaml`, `croner`...) to what they
 * resolve to, since the copy lives outside the members. The copy goes under `.tmp/` in the
 * repository, so the root `deno.json` (lock file, unstable flags) applies to both.
 *
 * What the copy leaves out is what TypeScript costs at load: the emit's source map (which carries
 * the whole source again, and which Deno finds and cuts off each time it loads the module) and the
 * check of the emit cache. Modules that only types import cost nothing either way: `deno run`
 * neither reads nor prepares them.
 *
 * Run the original first: the emit cache must hold its modules. A module with no emit was
 * never loaded by it (only types import it, or a dynamic import that did not run) and is left out;
 * should the copy need it, the copy fails to start, naming it.
 *
 * @module
 */

/** A module of `deno info --json`. */
interface InfoModule {
  specifier: string;
  dependencies?: { specifier: string; code?: { specifier?: string } }[];
}

async function denoInfo(args: string[], cwd: string): Promise<unknown> {
  const out = await new Deno.Command(Deno.execPath(), {
    args: ["info", "--json", ...args],
    cwd,
    stdout: "piped",
    stderr: "inherit",
  }).output();
  if (!out.success) throw new Error(`deno info ${args.join(" ")} failed`);
  return JSON.parse(new TextDecoder().decode(out.stdout));
}

/** Replaces `from "<spec>"`, `import("<spec>"` and `import "<spec>"` (either quote). */
function replaceImport(source: string, spec: string, to: string): string {
  const escaped = spec.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
  const pattern = new RegExp(
    `(\\bfrom\\s*|\\bimport\\s*\\(\\s*|\\bimport\\s+)(["'])${escaped}\\2`,
    "g",
  );
  return source.replace(
    pattern,
    (_m, head: string, quote: string) => `${head}${quote}${to}${quote}`,
  );
}

/**
 * Writes the JavaScript copy of the program whose entry is `entry`.
 *
 * @param root The repository root (a `file:` URL ending in `/`).
 * @param entry The entry, relative to `root`.
 * @param out The folder for the copy, relative to `root`, without a final `/` (emptied first).
 * @returns The copy's entry, relative to `root`.
 */
export async function writeAsJs(root: URL, entry: string, out: string): Promise<string> {
  const cache = (await denoInfo([], root.pathname) as { typescriptCache: string }).typescriptCache;
  const { modules } = await denoInfo([entry], root.pathname) as { modules: InfoModule[] };
  const base = root.href;
  const outDir = new URL(`${out}/`, root);
  await Deno.remove(outDir, { recursive: true }).catch(() => {});
  const jsPath = (rel: string) => rel.replace(/\.ts$/, ".js");
  for (const m of modules) {
    if (!m.specifier.startsWith(base)) continue;
    const rel = m.specifier.slice(base.length);
    let code: string;
    if (rel.endsWith(".ts")) {
      const emitted = `${cache}/file${new URL(rel, root).pathname}.js`;
      try {
        code = await Deno.readTextFile(emitted);
      } catch {
        // never loaded by the original (only types import it, or a dynamic import not taken)
        continue;
      }
      code = code.replace(/\n\/\/# sourceMappingURL=data:[^\n]*\n?/, "\n")
        .replace(/\n\/\/ denoCacheMetadata=[^\n]*\n?$/, "\n");
    } else code = await Deno.readTextFile(new URL(rel, root));
    const up = "../".repeat(jsPath(rel).split("/").length - 1);
    for (const d of m.dependencies ?? []) {
      const target = d.code?.specifier;
      if (target === undefined || target === d.specifier) continue;
      if (target.startsWith(base)) {
        const to = up + jsPath(target.slice(base.length));
        code = replaceImport(code, d.specifier, to.startsWith(".") ? to : `./${to}`);
      } else if (target.startsWith("npm:")) {
        code = replaceImport(code, d.specifier, target);
      }
    }
    const file = new URL(jsPath(rel), outDir);
    await Deno.mkdir(new URL(".", file), { recursive: true });
    await Deno.writeTextFile(file, code);
  }
  return `${out}/${jsPath(entry)}`;
}
