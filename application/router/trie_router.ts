/**
 * The default router: static routes in a `Map` per method (one lookup, no allocation), dynamic
 * routes in a segment trie per method. Lookup cost does not grow with the number of static routes
 * and grows only with the depth of the path for dynamic ones.
 *
 * @module
 */

import { parsePattern, type RouteMatch, type Router } from "./router.ts";

interface Leaf<T> {
  value: T;
  pattern: string;
  /** Builds the params object from the captured values (one object shape per route). */
  build: (values: string[]) => Record<string, string>;
  /** Prebuilt result for static routes (no allocation per lookup). */
  match?: RouteMatch<T>;
}

const NO_PARAMS: Record<string, string> = Object.freeze({}) as Record<string, string>;

class Node<T> {
  statics?: Map<string, Node<T>>;
  param?: { name: string; node: Node<T> };
  catchAll?: { name: string; leaf: Leaf<T> };
  leaf?: Leaf<T>;
}

function normalise(path: string): string {
  let end = path.length;
  while (end > 1 && path.charCodeAt(end - 1) === 47) end--;
  return end === path.length ? path : path.slice(0, end);
}

/**
 * Creates the default router.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { TrieRouter } from "@fw/application/router";
 * const r = new TrieRouter<string>();
 * r.add("GET", "/users/:id", "user");
 * r.add("GET", "/users/me", "me");
 * assert.deepEqual(r.find("GET", "/users/7")?.params, { id: "7" });
 * assert.equal(r.find("GET", "/users/me")?.value, "me");
 * assert.deepEqual(r.allowed("/users/7"), ["GET"]);
 * ```
 */
export class TrieRouter<T> implements Router<T> {
  readonly #static = new Map<string, Map<string, Leaf<T>>>();
  readonly #dynamic = new Map<string, Node<T>>();
  readonly #methods = new Set<string>();
  /** Scratch array of captured values; lookups are synchronous, so one array serves all. */
  readonly #values: string[] = [];

  /** Registers a route; throws on duplicates and ambiguous parameter names. */
  add(method: string, pattern: string, value: T): void {
    const segments = parsePattern(pattern);
    this.#methods.add(method);
    const dynamic = segments.some((s) => s[0] === ":" || s[0] === "*");
    if (!dynamic) {
      const path = "/" + segments.join("/");
      let byMethod = this.#static.get(method);
      if (!byMethod) this.#static.set(method, byMethod = new Map());
      const existing = byMethod.get(path);
      if (existing) throw duplicate(method, pattern, existing.pattern);
      byMethod.set(path, {
        value,
        pattern,
        build: () => NO_PARAMS,
        match: { value, params: NO_PARAMS, pattern },
      });
      return;
    }
    let node = this.#dynamic.get(method);
    if (!node) this.#dynamic.set(method, node = new Node());
    const names: string[] = [];
    for (const seg of segments) {
      if (seg[0] === "*") {
        const name = seg.slice(1);
        if (node.catchAll) throw duplicate(method, pattern, node.catchAll.leaf.pattern);
        names.push(name);
        node.catchAll = { name, leaf: { value, pattern, build: paramsBuilder(names) } };
        return;
      }
      if (seg[0] === ":") {
        const name = seg.slice(1);
        if (node.param && node.param.name !== name) {
          throw new Error(
            `Cannot register route "${method} ${pattern}": parameter ":${name}" is ambiguous with ":${node.param.name}" at the same position`,
          );
        }
        node.param ??= { name, node: new Node() };
        names.push(name);
        node = node.param.node;
      } else {
        node.statics ??= new Map();
        let next = node.statics.get(seg);
        if (!next) node.statics.set(seg, next = new Node());
        node = next;
      }
    }
    if (node.leaf) throw duplicate(method, pattern, node.leaf.pattern);
    node.leaf = { value, pattern, build: paramsBuilder(names) };
  }

  /** Finds a route; parameter values are returned raw (percent-encoded). */
  find(method: string, path: string): RouteMatch<T> | undefined {
    const p = normalise(path);
    const hit = this.#static.get(method)?.get(p);
    if (hit) return hit.match;
    const root = this.#dynamic.get(method);
    if (!root) return undefined;
    const values = this.#values;
    values.length = 0;
    const leaf = search(root, p, 1, values);
    if (!leaf) return undefined;
    return { value: leaf.value, params: leaf.build(values), pattern: leaf.pattern };
  }

  /** Methods whose routes match `path`, sorted. */
  allowed(path: string): string[] {
    const out: string[] = [];
    for (const m of this.#methods) if (this.find(m, path)) out.push(m);
    return out.sort();
  }
}

/**
 * A function that turns captured values into `{ [name]: value }` with the keys in a fixed order,
 * compiled once per route so every params object of a route has the same shape.
 */
function paramsBuilder(names: readonly string[]): (values: string[]) => Record<string, string> {
  // `__proto__` as a literal key would set the prototype; the computed form defines a property.
  const key = (n: string) => n === "__proto__" ? `["__proto__"]` : JSON.stringify(n);
  const fields = names.map((n, i) => `${key(n)}: v[${i}]`).join(", ");
  return new Function("v", `"use strict"; return { ${fields} };`) as (
    values: string[],
  ) => Record<string, string>;
}

function duplicate(method: string, pattern: string, existing: string): Error {
  return new Error(
    `Cannot register route "${method} ${pattern}": already registered as "${method} ${existing}"`,
  );
}

function search<T>(
  node: Node<T>,
  path: string,
  start: number,
  values: string[],
): Leaf<T> | undefined {
  if (start > path.length || (start === path.length && path !== "/")) return node.leaf;
  if (path === "/") return node.leaf;
  let end = path.indexOf("/", start);
  if (end === -1) end = path.length;
  const seg = path.slice(start, end);
  const next = node.statics?.get(seg);
  if (next) {
    const found = search(next, path, end + 1, values);
    if (found) return found;
  }
  if (node.param && seg !== "") {
    values.push(seg);
    const found = search(node.param.node, path, end + 1, values);
    if (found) return found;
    values.pop();
  }
  if (node.catchAll) {
    values.push(path.slice(start));
    return node.catchAll.leaf;
  }
  return undefined;
}
