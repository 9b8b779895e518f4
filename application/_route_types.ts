/**
 * The route map `generate` appends to `.gen/api.gen.ts`: `export type ApiRoutes`, one entry per
 * route, keyed `"<METHOD> <path>"` with the prefix applied (the `api()` prefix or the enclosing
 * module's path), whose value is the type of the file's endpoint definition. It names the
 * loader's own namespace imports (`$0`, `$1`...), so the file gains no import. `route.ts` files
 * become a mapped type over their method exports, so the map follows them without importing them
 * here. `apiClient<ApiRoutes>()` of `@fw/application/client` reads it.
 *
 * @module
 */

import type { Plugin } from "@fw/runtime";
import { routeOfFile } from "./_scan.ts";

/** The line that records the prefixes, so a `generate` that does not import the entry keeps them. */
const PREFIXES_LINE = "// ApiRoutes prefixes: ";

/**
 * Renders the `ApiRoutes` type of a loader.
 *
 * @param files Route files relative to the scanned folder, in the loader's order (sorted).
 * @param prefixes The prefixes the routes are served under (`""` for none), one map entry each.
 * @returns TypeScript source to append to the loader.
 */
export function renderRouteTypes(files: readonly string[], prefixes: readonly string[]): string {
  const sorted = [...files].sort();
  const entries: string[] = [];
  const mapped: string[] = [];
  for (const prefix of prefixes) {
    sorted.forEach((file, i) => {
      const { method, path } = routeOfFile(file);
      const full = prefix && path === "/" ? prefix : prefix + path;
      if (method !== undefined) {
        entries.push(`  ${JSON.stringify(`${method} ${full}`)}: typeof $${i}.default;`);
      } else {
        mapped.push(
          `  & {\n    [K in keyof typeof $${i} & Method as \`\${K} ${full}\`]: (typeof $${i})[K];\n  }`,
        );
      }
    });
  }
  const lines = [
    "",
    `${PREFIXES_LINE}${JSON.stringify(prefixes)}`,
    ...(mapped.length ? ['type Method = "GET" | "POST" | "PUT" | "PATCH" | "DELETE";', ""] : []),
    "/**",
    ' * Every route of this folder by `"<METHOD> <path>"`, for `apiClient<ApiRoutes>()` of',
    " * `@fw/application/client`.",
    " */",
    entries.length ? "export type ApiRoutes =\n  & {" : "export type ApiRoutes = {",
  ];
  if (entries.length) {
    lines.push(...entries.map((e) => `  ${e}`), "  }");
    lines.push(...mapped);
    lines[lines.length - 1] += ";";
  } else if (mapped.length) {
    lines[lines.length - 1] = "export type ApiRoutes =\n  & Record<never, never>";
    lines.push(...mapped);
    lines[lines.length - 1] += ";";
  } else lines[lines.length - 1] += "};";
  return lines.join("\n") + "\n";
}

/**
 * The prefixes recorded in an existing loader.
 *
 * @param text The loader's source.
 * @returns The prefixes, or `undefined` when the loader records none.
 */
export function recordedPrefixes(text: string): string[] | undefined {
  const line = text.split("\n").find((l) => l.startsWith(PREFIXES_LINE));
  if (!line) return undefined;
  try {
    const value = JSON.parse(line.slice(PREFIXES_LINE.length));
    return Array.isArray(value) && value.every((v) => typeof v === "string") ? value : undefined;
  } catch {
    return undefined;
  }
}

interface ScanningApi extends Plugin {
  readonly options: { readonly scanFolder?: string; readonly autoScan?: boolean };
  readonly prefix: string;
}

function collect(plugins: readonly Plugin[], folder: string, out: Set<string>): void {
  for (const plugin of plugins) {
    const p = plugin as Partial<ScanningApi>;
    if (
      plugin.name === "api" && typeof p.prefix === "string" && p.options?.autoScan !== false &&
      (p.options?.scanFolder ?? "api") === folder
    ) out.add(p.prefix);
    const children = (plugin as { plugins?: unknown }).plugins;
    if (Array.isArray(children)) collect(children, folder, out);
  }
}

/**
 * The prefixes under which the applications an entry exports serve a route folder: imports the
 * entry, warms every exported application up (nothing listens) and reads each scanning `api()`.
 *
 * @param entry `file:` URL of the entry file.
 * @param folder The scanned folder (`api`).
 * @returns The prefixes, sorted; `undefined` when no exported application scans that folder.
 * @throws {Error} When the entry cannot be imported or warmed up.
 */
export async function servedPrefixes(entry: string, folder: string): Promise<string[] | undefined> {
  let mod: Record<string, unknown>;
  try {
    mod = await import(entry);
  } catch (error) {
    throw new Error(
      `Cannot import "${entry}" to read the prefix of its routes: ${(error as Error).message}`,
      { cause: error },
    );
  }
  const out = new Set<string>();
  for (const value of new Set(Object.values(mod))) {
    const app = value as { warmup?: unknown; plugins?: unknown } | null;
    if (typeof app?.warmup !== "function" || !Array.isArray(app.plugins)) continue;
    await (app.warmup as () => Promise<void>)();
    collect(app.plugins as Plugin[], folder, out);
  }
  return out.size ? [...out].sort() : undefined;
}
