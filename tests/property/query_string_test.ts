import assert from "node:assert/strict";
import { QueryString } from "@fw/runtime";
import { check, fc } from "./_property.ts";

/** Characters that matter to the parser, plus letters, UTF-8 and escapes (good and broken). */
const piece = fc.oneof(
  fc.constantFrom("&", "=", "+", "%", "?", "a", "b", "k", "é", "😀", " ", "#", "/"),
  fc.constantFrom("%20", "%2B", "%26", "%3D", "%C3%A9", "%C3", "%ZZ", "%E2%82", "%F0%9F%98%80"),
  fc.constantFrom("%ED%A0%80", "%C0%80", "%FF", "%2", "%%", "%e2%82%ac"),
  fc.string({ maxLength: 3 }),
);
const query = fc.array(piece, { maxLength: 30 }).map((parts) => parts.join(""));

Deno.test("QueryString yields the same pairs as URLSearchParams for any query", () => {
  check(fc.property(query, (q) => {
    assert.deepEqual([...new QueryString(q)], [...new URLSearchParams(q)]);
  }));
});

Deno.test("QueryString.get/getAll/has agree with URLSearchParams for every key it holds", () => {
  check(fc.property(query, piece, (q, extra) => {
    const ours = new QueryString(q);
    const theirs = new URLSearchParams(q);
    for (const key of [...theirs.keys(), extra, ""]) {
      assert.equal(ours.get(key), theirs.get(key), `get ${JSON.stringify(key)}`);
      assert.deepEqual(ours.getAll(key), theirs.getAll(key));
      assert.equal(ours.has(key), theirs.has(key));
    }
  }));
});

Deno.test("QueryString reads back what URLSearchParams encoded, for any pairs", () => {
  const pairs = fc.array(fc.tuple(fc.string(), fc.string()), { maxLength: 8 });
  check(fc.property(pairs, (entries) => {
    // well-formed strings only: a request URL never holds lone surrogates
    const clean = entries.map(([k, v]) => [k.toWellFormed(), v.toWellFormed()]);
    const encoded = new URLSearchParams(clean).toString();
    assert.deepEqual([...new QueryString(encoded)], clean);
    assert.deepEqual([...new QueryString("?" + encoded)], clean);
  }));
});
