/**
 * File-based route conventions: which files are routes, and the method and path each
 * one declares. Used at run time by `api()` and at build time by `generate`.
 *
 * | file | route |
 * | --- | --- |
 * | `get.ts`, `post.ts`, `put.ts`, `patch.ts`, `delete.ts` | that method on the folder's path |
 * | `<name>.<method>.ts` | that method on `<folder>/<name>` |
 * | `route.ts`, `routes.ts` | named exports `GET`, `POST`, ... on the folder's path |
 * | `<name>.ws.ts`, `ws.ts` | a stream endpoint (GET) on `<folder>/<name>` (or the folder) |
 * | folder `[id]` / `[...rest]` | path parameter `:id` / catch-all `*rest` |
 *
 * Files whose name starts with `_` and other `.ts` files are helpers, not routes.
 *
 * @module
 */

import type { AppContext, LoaderRoute, ModuleMap } from "@fw/runtime";
import { type FileRoute, routesOfFiles, routesOfTable } from "./endpoint.ts";

const METHODS = ["get", "post", "put", "patch", "delete", "head", "options"];
const NAMED = /^(.+)\.(get|post|put|patch|delete|head|options|ws)$/;

/**
 * Tells whether a file (relative path) is a route file by its name.
 *
 * @param rel Relative path with forward slashes.
 * @returns True for route files.
 */
export function isRouteFile(rel: string): boolean {
  const name = rel.slice(rel.lastIndexOf("/") + 1);
  if (!/\.tsx?$/.test(name) || name.startsWith("_") || name.endsWith(".d.ts")) return false;
  const base = name.replace(/\.tsx?$/, "");
  return METHODS.includes(base) || base === "route" || base === "routes" || base === "ws" ||
    NAMED.test(base);
}

function segment(part: string, file: string): string {
  const m = /^\[(\.\.\.)?([^\]]*)\]$/.exec(part);
  if (!m) {
    if (part.includes("[") || part.includes("]")) {
      throw new Error(`Invalid route file "${file}": segment "${part}" mixes brackets with text`);
    }
    return part;
  }
  if (!/^[A-Za-z_$][\w$]*$/.test(m[2])) {
    throw new Error(
      `Invalid route file "${file}": parameter name "${m[2]}" must be a JavaScript identifier`,
    );
  }
  return (m[1] ? "*" : ":") + m[2];
}

function toPath(parts: string[], file: string): string {
  const segs = parts.map((p) => segment(p, file));
  const star = segs.findIndex((s) => s.startsWith("*"));
  if (star !== -1 && star !== segs.length - 1) {
    throw new Error(
      `Invalid route file "${file}": a [...catchall] folder must be the last segment`,
    );
  }
  return "/" + segs.join("/");
}

/**
 * What a route file's name declares: its method (`undefined` for `route.ts`, whose exports name
 * the methods) and its path relative to the prefix.
 *
 * @param file A route file relative to the scanned folder (see {@linkcode isRouteFile}).
 * @returns The method, the path and whether the file is a stream file (`ws.ts`, `<name>.ws.ts`).
 * @throws {Error} For bad folder names (brackets mixed with text, a catch-all not last).
 */
export function routeOfFile(
  file: string,
): { method: string | undefined; path: string; ws: boolean } {
  const parts = file.split("/");
  const base = parts.pop()!.replace(/\.tsx?$/, "");
  if (METHODS.includes(base)) {
    return { method: base.toUpperCase(), path: toPath(parts, file), ws: false };
  }
  if (base === "route" || base === "routes") {
    return { method: undefined, path: toPath(parts, file), ws: false };
  }
  const m = NAMED.exec(base);
  const name = base === "ws" ? undefined : m![1];
  const ws = base === "ws" || m![2] === "ws";
  return {
    method: ws ? "GET" : m![2].toUpperCase(),
    path: toPath(name ? [...parts, name] : parts, file),
    ws,
  };
}

/**
 * Turns the modules of a route folder into routes, checking conflicts.
 *
 * @param modules Module namespaces by relative path.
 * @returns The routes, sorted by path then method.
 * @throws {Error} For bad file names, missing exports, duplicate routes and ambiguous parameters
 *   (naming both files).
 */
export function routesFromModules(modules: ModuleMap): FileRoute[] {
  const files = Object.keys(modules).sort().filter(isRouteFile).map(declared);
  checkConflicts(files);
  return routesOfFiles(modules, files);
}

/** What a route file's name declares, as a route table lists it. */
function declared(file: string): LoaderRoute {
  const { method, path, ws } = routeOfFile(file);
  return { file, ...(method && { method }), path, ...(ws && { stream: true }) };
}

/**
 * The routes of a route folder: those of the modules given (a generated loader's), or of the
 * folder's generated loader when it is current, or of its files, imported now.
 *
 * @param modules The modules of a loader passed to `api({ manifest })`.
 * @param rootOption `api({ root })`.
 * @param scanFolder The folder, relative to the entry directory.
 * @param ctx The application (its entry directory and logger).
 * @returns The routes, sorted by path then method.
 * @throws {Error} When there is no folder to scan, and as {@linkcode routesFromModules}.
 */
export async function discoverRoutes(
  modules: ModuleMap | undefined,
  rootOption: string | URL | undefined,
  scanFolder: string,
  ctx: AppContext,
): Promise<FileRoute[]> {
  let table: readonly LoaderRoute[] | undefined;
  if (!modules) {
    // the loader code loads only to scan (a deployed app passes its generated loader)
    const { loadModules, rootDirOf } = await import("@fw/runtime/loader");
    const root = rootDirOf(rootOption) ?? ctx.entryDir;
    if (!root) {
      throw new Error(
        "api(): cannot tell where to scan for routes: pass application({ root: import.meta.url }) or api({ root })",
      );
    }
    const loaded = await loadModules(root, scanFolder, "api", isRouteFile);
    if (!loaded) {
      throw new Error(
        `api(): route folder "${root}/${scanFolder}" does not exist: create it, set "scanFolder", or use api({ autoScan: false })`,
      );
    }
    if (loaded.stale) {
      ctx.logger.warn(
        `.gen/api.gen.ts is out of date with ${scanFolder}/: scanned instead; run generate`,
      );
    }
    modules = loaded.modules;
    table = loaded.routes;
  }
  return (table && routesOfTable(modules, table)) ?? routesFromModules(modules);
}

/**
 * What the names of route files declare, for the route table `generate` writes into
 * `.gen/api.gen.ts` (`LoaderManifest.routes`).
 *
 * @param files Route files relative to the folder.
 * @returns One entry per file; `undefined` when the names alone conflict (two files declaring the
 *   same route, sibling parameters with different names), so that start-up scans and reports it.
 * @throws {Error} For bad folder names, as {@linkcode routeOfFile}.
 */
export function routeTable(files: readonly string[]): LoaderRoute[] | undefined {
  const table = files.map(declared);
  try {
    checkConflicts(table);
  } catch {
    return undefined;
  }
  return table;
}

/**
 * Refuses duplicate routes and sibling parameters with different names (for a route whose method
 * is not known, a `route.ts` in the route table, only the latter).
 */
function checkConflicts(routes: readonly { method?: string; path: string; file: string }[]): void {
  const seen = new Map<string, { file: string }>();
  const params = new Map<string, { path: string; file: string }>();
  for (const r of routes) {
    const key = `${r.method} ${r.path}`;
    const other = r.method === undefined ? undefined : seen.get(key);
    if (other) {
      throw new Error(
        `Cannot register route "${key}": already registered by ${other.file} (also declared by ${r.file})`,
      );
    }
    if (r.method !== undefined) seen.set(key, r);
    const segs = r.path.split("/");
    for (let i = 1; i < segs.length; i++) {
      if (segs[i][0] !== ":" && segs[i][0] !== "*") continue;
      const where = `${segs.slice(0, i).join("/")}/${segs[i][0]}`;
      const prev = params.get(where);
      const prevName = prev?.path.split("/")[i];
      if (prev && prevName !== segs[i]) {
        throw new Error(
          `Ambiguous routes: "${prevName}" (${prev.file}) and "${
            segs[i]
          }" (${r.file}) are sibling parameters at "${segs.slice(0, i).join("/") || "/"}"`,
        );
      }
      if (!prev) params.set(where, r);
    }
  }
}
