import assert from "node:assert/strict";
import { catchAllOf, decodeParams, pathOf, urlOf } from "./_dispatch.ts";

Deno.test("pathOf() cuts the path out of a request URL", () => {
  assert.equal(pathOf("http://localhost:8000/users/7?limit=1"), "/users/7");
  assert.equal(pathOf("http://localhost/a/b"), "/a/b");
  assert.equal(pathOf("http://localhost"), "/");
  assert.equal(pathOf("http://x/a#frag"), "/a");
  assert.equal(pathOf("http://x/a#frag?not-a-query"), "/a");
  assert.equal(pathOf("http://x/a?q=1#frag"), "/a");
  assert.equal(pathOf("http://x/%E2%82%AC?x"), "/%E2%82%AC");
});

Deno.test("urlOf() answers the URL of whichever request it is given", () => {
  const a = new Request("http://x/a");
  const b = new Request("http://x/b");
  assert.equal(urlOf(a), "http://x/a");
  assert.equal(urlOf(a), "http://x/a");
  assert.equal(urlOf(b), "http://x/b");
  assert.equal(urlOf(a), "http://x/a");
});

Deno.test("decodeParams() decodes only what needs it and guards catch-alls", () => {
  const raw = { id: "7", name: "caf%C3%A9" };
  assert.deepEqual(decodeParams(raw, undefined), { id: "7", name: "café" });
  const plain = { id: "7" };
  assert.equal(decodeParams(plain, undefined), plain);
  assert.equal(catchAllOf("/files/*path"), "path");
  assert.equal(catchAllOf("/files/:id"), undefined);
  assert.deepEqual(decodeParams({ path: "a/b%20c" }, "path"), { path: "a/b c" });
  for (const bad of ["a/../b", "a/%2e%2e/b", "%2F", "a/."]) {
    const res = decodeParams({ path: bad }, "path");
    assert.ok(res instanceof Response, bad);
    assert.equal(res.status, 400);
  }
  const malformed = decodeParams({ id: "%E2%82" }, undefined);
  assert.ok(malformed instanceof Response);
  assert.equal(malformed.status, 400);
});
