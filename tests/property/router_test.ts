import assert from "node:assert/strict";
import { TrieRouter } from "@fw/application/router";
import { check, fc } from "./_property.ts";

interface Route {
  method: string;
  pattern: string;
  segments: string[];
}

const METHODS = ["GET", "POST", "PUT"];
const NAMES = ["a", "b", "users", "new"];

/** A pattern: static names, positional `:pN` params, an optional `*rest` at the end. */
const route: fc.Arbitrary<Route> = fc.tuple(
  fc.constantFrom(...METHODS),
  fc.array(fc.oneof(fc.constantFrom(...NAMES), fc.constant(":")), { maxLength: 4 }),
  fc.boolean(),
).map(([method, raw, catchAll]) => {
  const segments = raw.map((s, i) => s === ":" ? `:p${i}` : s);
  if (catchAll) segments.push("*rest");
  return { method, segments, pattern: "/" + segments.join("/") };
});

const routes = fc.uniqueArray(route, {
  maxLength: 12,
  selector: (r) => `${r.method} ${r.pattern}`,
});

const path = fc.tuple(
  fc.array(fc.constantFrom(...NAMES, "7", "x", ""), { maxLength: 6 }),
  fc.boolean(),
).map(([segs, slash]) => "/" + segs.join("/") + (slash ? "/" : ""));

/** The reference: try every route; the best match has the smallest static<param<catch-all ranks. */
function naiveFind(all: Route[], method: string, rawPath: string) {
  let p = rawPath;
  while (p.length > 1 && p.endsWith("/")) p = p.slice(0, -1);
  const segs = p === "/" ? [] : p.slice(1).split("/");
  let best: { rank: number[]; route: Route; params: Record<string, string> } | undefined;
  for (const r of all) {
    if (r.method !== method) continue;
    const params: Record<string, string> = {};
    const rank: number[] = [];
    let ok = true;
    for (let i = 0; i < r.segments.length && ok; i++) {
      const s = r.segments[i];
      if (s[0] === "*") {
        const rest = segs.slice(i).join("/");
        if (i >= segs.length || rest === "") ok = false;
        else {
          params[s.slice(1)] = rest;
          rank.push(2);
        }
        if (ok) break;
      } else if (i >= segs.length) ok = false;
      else if (s[0] === ":") {
        if (segs[i] === "") ok = false;
        params[s.slice(1)] = segs[i];
        rank.push(1);
      } else {
        if (segs[i] !== s) ok = false;
        rank.push(0);
      }
      if (ok && i === r.segments.length - 1 && s[0] !== "*" && segs.length !== r.segments.length) {
        ok = false;
      }
    }
    if (r.segments.length === 0 && segs.length !== 0) ok = false;
    if (!ok) continue;
    if (best === undefined || compareRanks(rank, best.rank) < 0) best = { rank, route: r, params };
  }
  return best;
}

function compareRanks(a: number[], b: number[]): number {
  for (let i = 0; i < Math.min(a.length, b.length); i++) if (a[i] !== b[i]) return a[i] - b[i];
  return a.length - b.length;
}

Deno.test("TrieRouter finds the same route and params as a naive matcher, and the same 404/405", () => {
  check(
    fc.property(routes, fc.array(path, { minLength: 1, maxLength: 10 }), (all, paths) => {
      const router = new TrieRouter<string>();
      for (const r of all) router.add(r.method, r.pattern, r.pattern);
      for (const p of paths) {
        for (const method of METHODS) {
          const expected = naiveFind(all, method, p);
          const got = router.find(method, p);
          assert.equal(got?.pattern, expected?.route.pattern, `${method} ${p}`);
          if (expected) assert.deepEqual({ ...got!.params }, expected.params, `${method} ${p}`);
        }
        const allowed = METHODS.filter((m) => naiveFind(all, m, p) !== undefined).sort();
        assert.deepEqual(router.allowed(p), allowed, `allowed ${p}`);
      }
    }),
  );
});
