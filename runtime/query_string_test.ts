import assert from "node:assert/strict";
import { QueryString } from "./query_string.ts";
import { compile } from "./validator.ts";
import { ArrayOf, Int, Optional } from "./schema.ts";

const CASES = [
  "",
  "?",
  "a=1",
  "?a=1&b=2",
  "a=1&a=2&a=3",
  "a&b=&=c",
  "&&a=1&&",
  "q=x+y%20z",
  "k%20ey=v",
  "a=b=c",
  "e=%E2%82%AC",
  "bad=%ZZ&half=%E2%82",
  "mixed=%41%zz%42",
  "plus=%2B+",
  "__proto__=1&constructor=2&hasOwnProperty=3",
  "toString=x&valueOf=y",
  "utf=%F0%9F%98%80&lone=%ED%A0%80",
  "a=%",
  "a=%2",
];

Deno.test("QueryString reads what URLSearchParams reads, for every case", () => {
  for (const input of CASES) {
    const ours = new QueryString(input);
    const theirs = new URLSearchParams(input);
    assert.deepEqual([...ours], [...theirs], `pairs of ${JSON.stringify(input)}`);
    const keys = new Set([...theirs.keys(), "missing", "__proto__", "toString"]);
    for (const key of keys) {
      assert.equal(ours.get(key), theirs.get(key), `get(${key}) of ${JSON.stringify(input)}`);
      assert.deepEqual(ours.getAll(key), theirs.getAll(key), `getAll(${key}) of ${input}`);
      assert.equal(ours.has(key), theirs.has(key), `has(${key}) of ${JSON.stringify(input)}`);
    }
  }
});

Deno.test("QueryString.getAll returns a copy the caller may change", () => {
  const q = new QueryString("a=1&a=2");
  q.getAll("a").push("3");
  assert.deepEqual(q.getAll("a"), ["1", "2"]);
  q.getAll("missing").push("x");
  assert.deepEqual(q.getAll("missing"), []);
});

Deno.test("query validators read a QueryString as they read URLSearchParams", () => {
  const validate = compile({ limit: Int, tag: Optional(ArrayOf(String)) }, "query");
  assert.deepEqual(validate(new QueryString("limit=5&tag=a&tag=b")), {
    ok: true,
    value: { limit: 5, tag: ["a", "b"] },
  });
  assert.deepEqual(validate(new QueryString("limit=x")), {
    ok: false,
    errors: [{ field: "query.limit", message: "query.limit must be an integer" }],
  });
});
