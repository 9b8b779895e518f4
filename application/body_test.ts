import assert from "node:assert/strict";
import { HttpException, ValidationException } from "@fw/runtime";
import { isJsonContentType, MAX_BODY_DEPTH, readJsonBody } from "./body.ts";

function req(
  body: BodyInit | null,
  headers: Record<string, string> = { "content-type": "application/json" },
) {
  return new Request("http://localhost/", { method: "POST", headers, body });
}

async function failure(promise: Promise<unknown>): Promise<HttpException> {
  try {
    await promise;
  } catch (error) {
    assert.ok(error instanceof HttpException);
    return error;
  }
  assert.fail("expected a rejection");
}

Deno.test("readJsonBody() parses a JSON body", async () => {
  assert.deepEqual(await readJsonBody(req('{"a":[1,{"b":null}]}'), 100), { a: [1, { b: null }] });
});

Deno.test("readJsonBody() returns undefined for no body, an empty body or whitespace", async () => {
  assert.equal(await readJsonBody(new Request("http://localhost/"), 100), undefined);
  assert.equal(await readJsonBody(req(""), 100), undefined);
  assert.equal(await readJsonBody(req(" \n"), 100), undefined);
  assert.equal(await readJsonBody(req("x", { "content-length": "0" }), 100), undefined);
});

Deno.test("readJsonBody() rejects a missing or non-JSON content type with 415", async () => {
  const missing = await failure(readJsonBody(req(new TextEncoder().encode("{}"), {}), 100));
  assert.equal(missing.status, 415);
  assert.equal(missing.message, "Missing Content-Type: expected application/json");
  const text = await failure(readJsonBody(req("{}", { "content-type": "text/plain" }), 100));
  assert.equal(text.message, 'Unsupported Content-Type "text/plain": expected application/json');
});

Deno.test("readJsonBody() rejects a body over the limit with 413, counting bytes not characters", async () => {
  const ok = await readJsonBody(req('"éé"'), 6);
  assert.equal(ok, "éé");
  const error = await failure(readJsonBody(req('"ééé"'), 6));
  assert.equal(error.status, 413);
  assert.equal(error.message, "Request body exceeds the limit of 6 bytes");
});

Deno.test("readJsonBody() rejects malformed JSON with a body validation error", async () => {
  const error = await failure(readJsonBody(req("{'a':1}"), 100));
  assert.ok(error instanceof ValidationException);
  assert.deepEqual(error.errors, [{ field: "body", message: "body must be valid JSON" }]);
});

Deno.test("readJsonBody() accepts nesting up to the depth limit and rejects one more", async () => {
  const nest = (n: number) => "[".repeat(n) + "]".repeat(n);
  assert.ok(Array.isArray(await readJsonBody(req(nest(MAX_BODY_DEPTH)), 1e6)));
  const error = await failure(readJsonBody(req(nest(MAX_BODY_DEPTH + 1)), 1e6));
  assert.equal(error.status, 400);
});

Deno.test("readJsonBody() removes __proto__ and constructor keys at every level", async () => {
  const value = await readJsonBody(
    req('{"__proto__":{"x":1},"list":[{"constructor":{"prototype":{"y":1}},"ok":1}]}'),
    1000,
  ) as Record<string, unknown>;
  assert.deepEqual(JSON.parse(JSON.stringify(value)), { list: [{ ok: 1 }] });
  assert.equal(Object.hasOwn(value, "__proto__"), false);
  assert.equal(Object.getPrototypeOf(value), Object.prototype);
  assert.equal(({} as Record<string, unknown>).x, undefined);
});

Deno.test("isJsonContentType() accepts JSON media types with parameters", () => {
  assert.equal(isJsonContentType("application/json"), true);
  assert.equal(isJsonContentType("Application/JSON; charset=UTF-8"), true);
  assert.equal(isJsonContentType("application/vnd.api+json"), true);
  assert.equal(isJsonContentType("text/json"), false);
  assert.equal(isJsonContentType("application/jsonp"), false);
  assert.equal(isJsonContentType(null), false);
});

Deno.test("readJsonBody() does not count brackets inside strings toward the depth limit", async () => {
  const brackets = "[{".repeat(200);
  const text = JSON.stringify({ a: brackets, b: `\\"${brackets}`, c: [[["\\\\"]]], d: "\\" });
  assert.deepEqual(await readJsonBody(req(text), 1e6), JSON.parse(text));
  const deep = `{"s":"]]]]\\"]]]]","x":${"[".repeat(MAX_BODY_DEPTH)}${"]".repeat(MAX_BODY_DEPTH)}}`;
  const error = await failure(readJsonBody(req(deep), 1e6));
  assert.match(error.message, /nested more than 64 levels/);
});

/** A request that announces its length, as every request from `Deno.serve` with a body does. */
function framed(text: string) {
  const length = String(new TextEncoder().encode(text).byteLength);
  return req(text, { "content-type": "application/json", "content-length": length });
}

Deno.test("readJsonBody() with Content-Length: parses, strips, limits depth and size", async () => {
  assert.deepEqual(await readJsonBody(framed('{"a":[1,{"b":null}],"c":"long enough"}'), 100), {
    a: [1, { b: null }],
    c: "long enough",
  });
  assert.deepEqual(await readJsonBody(framed("  \n "), 100), undefined);
  assert.deepEqual(await readJsonBody(framed("[1]"), 100), [1]);
  const stripped = await readJsonBody(
    framed('{"name":"Ada","__proto__":{"admin":true},"x":{"constructor":{"prototype":1}}}'),
    1000,
  ) as Record<string, unknown>;
  assert.deepEqual(Object.keys(stripped), ["name", "x"]);
  assert.deepEqual(stripped.x, {});
  for (const bad of ['{"name": "Ada",', "{'a':1}", '{"a":1} trailing text']) {
    const error = await failure(readJsonBody(framed(bad), 100));
    assert.equal(error.status, 400);
    assert.equal(error.message, "body must be valid JSON");
  }
  const nest = (n: number) => "[".repeat(n) + "]".repeat(n);
  assert.ok(Array.isArray(await readJsonBody(framed(nest(MAX_BODY_DEPTH)), 1e6)));
  const deep = await failure(readJsonBody(framed(nest(MAX_BODY_DEPTH + 1)), 1e6));
  assert.equal(deep.message, "body must not be nested more than 64 levels deep");
  const large = await failure(readJsonBody(framed(`"${"x".repeat(200)}"`), 100));
  assert.equal(large.status, 413);
});
