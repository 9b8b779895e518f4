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

import type { ModuleMap } from "@fw/runtime";
import { isEndpoint } from "./endpoint.ts";
import type { EndpointDefinition } from "./endpoint_types.ts";

const METHODS = ["get", "post", "put", "patch", "delete", "head", "options"];
const NAMED = /^(.+)\.(get|post|put|patch|delete|head|options|ws)$/;

/** One route found in a folder. */
export interface ScannedRoute {
  /** Upper-case method. */
  method: string;
  /** Pattern relative to the prefix (`/users/:id`). */
  path: string;
  /** File relative to the scanned folder. */
  file: string;
  /** The export holding the definition (`default`, `GET`...). */
  exportName: string;
  /** The endpoint definition. */
  definition: EndpointDefinition;
}

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

function definitionOf(
  mod: Record<string, unknown>,
  exportName: string,
  file: string,
): EndpointDefinition {
  const value = mod[exportName];
  if (!isEndpoint(value)) {
    const what = exportName === "default" ? "a default export" : `the export "${exportName}"`;
    throw new Error(`Route file "${file}" must have ${what} made with endpoint()`);
  }
  return value;
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
export function routesFromModules(modules: ModuleMap): ScannedRoute[] {
  const routes: ScannedRoute[] = [];
  for (const file of Object.keys(modules).sort()) {
    if (!isRouteFile(file)) continue;
    const mod = modules[file];
    const { method, path, ws } = routeOfFile(file);
    if (method === undefined) {
      const names = Object.keys(mod).filter((k) =>
        METHODS.includes(k.toLowerCase()) && k === k.toUpperCase()
      );
      if (names.length === 0) {
        throw new Error(
          `Route file "${file}" exports no method: export GET, POST, PUT, PATCH or DELETE endpoints`,
        );
      }
      for (const name of names.sort()) {
        routes.push({
          method: name,
          path,
          file,
          exportName: name,
          definition: definitionOf(mod, name, file),
        });
      }
      continue;
    }
    const definition = definitionOf(mod, "default", file);
    if (ws && definition.mode === "unary") {
      throw new Error(
        `Route file "${file}" must export a stream endpoint: wrap .body() or .returns() in Stream()`,
      );
    }
    routes.push({ method, path, file, exportName: "default", definition });
  }
  checkConflicts(routes);
  return routes.sort((a, b) =>
    a.path < b.path ? -1 : a.path > b.path ? 1 : a.method < b.method ? -1 : 1
  );
}

function checkConflicts(routes: ScannedRoute[]): void {
  const seen = new Map<string, ScannedRoute>();
  const params = new Map<string, ScannedRoute>();
  for (const r of routes) {
    const key = `${r.method} ${r.path}`;
    const other = seen.get(key);
    if (other) {
      throw new Error(
        `Cannot register route "${key}": already registered by ${other.file} (also declared by ${r.file})`,
      );
    }
    seen.set(key, r);
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
