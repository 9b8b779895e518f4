/**
 * Fails when the module graph of the workspace's own files has an import cycle (type-only imports
 * included). Reads `deno info --json` for every exports entry, test and script, and walks the
 * local (`file:`) part of the graph.
 *
 * Run by `deno task ok`; also `deno run -A scripts/check_cycles.ts`.
 *
 * @module
 */

import { exportEntries } from "./_members.ts";

interface InfoModule {
  specifier: string;
  dependencies?: { code?: { specifier?: string }; type?: { specifier?: string } }[];
}

const root = new URL("../", import.meta.url);

async function localFiles(dir: URL): Promise<string[]> {
  const out: string[] = [];
  for await (const entry of Deno.readDir(dir)) {
    if (entry.name.startsWith(".") || entry.name === "node_modules") continue;
    const url = new URL(entry.name + (entry.isDirectory ? "/" : ""), dir);
    if (entry.isDirectory) out.push(...await localFiles(url));
    else if (entry.name.endsWith(".ts")) out.push(url.pathname);
  }
  return out;
}

const files = [
  ...await exportEntries(),
  ...await localFiles(new URL("runtime/", root)),
  ...await localFiles(new URL("application/", root)),
  ...await localFiles(new URL("events/", root)),
];
// `deno info` takes one entry: a temporary module that imports every file.
const entry = await Deno.makeTempFile({ suffix: ".ts" });
await Deno.writeTextFile(
  entry,
  [...new Set(files)].map((f) => `import ${JSON.stringify(new URL(f, root).href)};`).join("\n"),
);
const { stdout, code } = await new Deno.Command(Deno.execPath(), {
  args: ["info", "--json", `--config=${new URL("deno.json", root).pathname}`, entry],
  stderr: "inherit",
}).output();
await Deno.remove(entry);
if (code !== 0) Deno.exit(code);
const info = JSON.parse(new TextDecoder().decode(stdout));
const modules: InfoModule[] = info.modules ?? [];
const edges = new Map<string, string[]>();
const base = root.href;
for (const m of modules) {
  if (!m.specifier.startsWith(base) || m.specifier.includes("/node_modules/")) continue;
  const deps = new Set<string>();
  for (const d of m.dependencies ?? []) {
    for (const s of [d.code?.specifier, d.type?.specifier]) {
      if (s?.startsWith(base)) deps.add(s);
    }
  }
  edges.set(m.specifier, [...deps]);
}

const state = new Map<string, 1 | 2>();
const cycles: string[][] = [];
function visit(node: string, stack: string[]): void {
  state.set(node, 1);
  stack.push(node);
  for (const next of edges.get(node) ?? []) {
    const s = state.get(next);
    if (s === 1) cycles.push([...stack.slice(stack.indexOf(next)), next]);
    else if (s === undefined) visit(next, stack);
  }
  stack.pop();
  state.set(node, 2);
}
for (const node of edges.keys()) if (!state.has(node)) visit(node, []);

const rel = (s: string) => s.slice(base.length);
if (cycles.length > 0) {
  for (const c of cycles) console.error(`import cycle: ${c.map(rel).join(" -> ")}`);
  Deno.exit(1);
}
console.log(`no import cycles among ${edges.size} modules`);
