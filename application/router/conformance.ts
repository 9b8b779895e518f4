/**
 * The router conformance suite: every {@linkcode Router} implementation runs it from its test
 * file (`runRouterConformance("TrieRouter", () => new TrieRouter())`).
 *
 * @module
 */

import assert from "node:assert/strict";
import type { Router } from "./router.ts";

/**
 * Registers the conformance tests for a router implementation with `Deno.test`.
 *
 * @param name Implementation name used in test names.
 * @param create Makes a fresh, empty router.
 */
export function runRouterConformance(name: string, create: () => Router<string>): void {
  const t = (what: string, fn: () => void) => Deno.test(`${name} ${what}`, fn);

  t("matches static routes by method and ignores a trailing slash", () => {
    const r = create();
    r.add("GET", "/", "root");
    r.add("GET", "/health", "health");
    r.add("POST", "/health", "post-health");
    assert.equal(r.find("GET", "/")?.value, "root");
    assert.equal(r.find("GET", "/health")?.value, "health");
    assert.equal(r.find("GET", "/health/")?.value, "health");
    assert.equal(r.find("POST", "/health")?.value, "post-health");
    assert.equal(r.find("PUT", "/health"), undefined);
    assert.equal(r.find("GET", "/nope"), undefined);
  });

  t("extracts parameters and catch-all remainders", () => {
    const r = create();
    r.add("GET", "/users/:id", "user");
    r.add("GET", "/users/:id/posts/:post", "post");
    r.add("GET", "/files/*path", "file");
    assert.deepEqual(r.find("GET", "/users/42"), {
      value: "user",
      params: { id: "42" },
      pattern: "/users/:id",
    });
    assert.deepEqual(r.find("GET", "/users/4/posts/9")?.params, { id: "4", post: "9" });
    assert.deepEqual(r.find("GET", "/files/a/b/c.txt")?.params, { path: "a/b/c.txt" });
    assert.equal(r.find("GET", "/files"), undefined);
    assert.equal(r.find("GET", "/users"), undefined);
    assert.equal(r.find("GET", "/users/42/extra"), undefined);
  });

  t("prefers static over parameter over catch-all, with backtracking", () => {
    const r = create();
    r.add("GET", "/a/*rest", "catch");
    r.add("GET", "/a/:id", "param");
    r.add("GET", "/a/new", "static");
    r.add("GET", "/a/:id/edit", "edit");
    r.add("GET", "/a/new/x/y", "deep");
    assert.equal(r.find("GET", "/a/new")?.value, "static");
    assert.equal(r.find("GET", "/a/7")?.value, "param");
    assert.equal(r.find("GET", "/a/new/edit")?.value, "edit");
    assert.deepEqual(r.find("GET", "/a/7/zzz"), {
      value: "catch",
      params: { rest: "7/zzz" },
      pattern: "/a/*rest",
    });
    assert.equal(r.find("GET", "/a/new/x/y")?.value, "deep");
  });

  t("reports the allowed methods of a path", () => {
    const r = create();
    r.add("GET", "/users/:id", "g");
    r.add("DELETE", "/users/:id", "d");
    r.add("PUT", "/users/me", "p");
    assert.deepEqual(r.allowed("/users/7"), ["DELETE", "GET"]);
    assert.deepEqual(r.allowed("/users/me"), ["DELETE", "GET", "PUT"]);
    assert.deepEqual(r.allowed("/nothing"), []);
  });

  t("rejects duplicates and ambiguous parameter names", () => {
    const r = create();
    r.add("GET", "/users/:id", "a");
    assert.throws(() => r.add("GET", "/users/:id", "b"), /already registered/);
    assert.throws(() => r.add("GET", "/users/:slug/x", "c"), /":slug" is ambiguous with ":id"/);
    r.add("GET", "/x", "x");
    assert.throws(() => r.add("GET", "/x/", "y"), /already registered/);
    assert.throws(() => r.add("GET", "users", "z"), /must start with "\/"/);
    assert.throws(() => r.add("GET", "/a/*rest/b", "z"), /must be the last segment/);
  });

  t("keeps lookups correct with 200 routes", () => {
    const r = create();
    for (let i = 0; i < 100; i++) {
      r.add("GET", `/static${i}/list`, `s${i}`);
      r.add("GET", `/res${i}/:id`, `d${i}`);
    }
    assert.equal(r.find("GET", "/static57/list")?.value, "s57");
    assert.deepEqual(r.find("GET", "/res99/abc")?.params, { id: "abc" });
    assert.equal(r.find("GET", "/res100/abc"), undefined);
  });
}
