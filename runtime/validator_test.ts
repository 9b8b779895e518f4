import assert from "node:assert/strict";
import { compile, copierOf, joinMessages } from "./validator.ts";
import {
  ArrayOf,
  DateIso,
  Desc,
  Email,
  Int,
  Max,
  MaxLength,
  Min,
  MinLength,
  Optional,
  Pattern,
  schema,
  Stream,
  Url,
  Uuid,
} from "./schema.ts";

const UUID = "7c9e6679-7425-40de-944b-e07fc1f90ae7";

function errors(result: { ok: boolean; errors?: unknown }): unknown {
  assert.equal(result.ok, false, "expected validation to fail");
  return result.errors;
}

Deno.test("compile() accepts valid bodies and drops unknown properties", () => {
  const v = compile({ name: String, age: Int, admin: Boolean, score: Number }, "body");
  assert.deepEqual(v({ name: "Ada", age: 36, admin: false, score: 1.5, role: "root" }), {
    ok: true,
    value: { name: "Ada", age: 36, admin: false, score: 1.5 },
  });
});

Deno.test("compile() reports every message form of spec 7.1 and DECISIONS.md", () => {
  const v = compile({
    id: Uuid,
    email: Email,
    site: Url,
    at: DateIso,
    s: String,
    n: Number,
    b: Boolean,
    i: Int,
    list: ArrayOf(String),
    obj: { x: String },
    min: Min(5),
    max: Max(10),
    minLen: MinLength(3),
    maxLen: MaxLength(2),
    pat: Pattern(/^[a-z]+$/),
    missing: String,
  }, "body");
  assert.deepEqual(
    errors(v({
      id: "not-a-uuid",
      email: "ada@",
      site: "not a url",
      at: "yesterday",
      s: 1,
      n: "1",
      b: "true",
      i: 1.5,
      list: "a",
      obj: [],
      min: 4,
      max: 11,
      minLen: "ab",
      maxLen: "abc",
      pat: "ABC",
    })),
    [
      { field: "body.id", message: "body.id must be a valid UUID" },
      { field: "body.email", message: "body.email must be a valid email address" },
      { field: "body.site", message: "body.site must be a valid URL" },
      { field: "body.at", message: "body.at must be a valid ISO 8601 date-time" },
      { field: "body.s", message: "body.s must be a string" },
      { field: "body.n", message: "body.n must be a number" },
      { field: "body.b", message: "body.b must be a boolean" },
      { field: "body.i", message: "body.i must be an integer" },
      { field: "body.list", message: "body.list must be an array" },
      { field: "body.obj", message: "body.obj must be an object" },
      { field: "body.min", message: "body.min must be >= 5" },
      { field: "body.max", message: "body.max must be <= 10" },
      { field: "body.minLen", message: "body.minLen must be at least 3 characters" },
      { field: "body.maxLen", message: "body.maxLen must be at most 2 characters" },
      { field: "body.pat", message: "body.pat must match pattern ^[a-z]+$" },
      { field: "body.missing", message: "body.missing is required" },
    ],
  );
});

Deno.test("compile() names nested fields and array items like body.items[1].sku", () => {
  const v = compile({ order: { items: ArrayOf({ sku: MinLength(3), qty: Min(1, Int) }) } }, "body");
  assert.deepEqual(
    errors(v({ order: { items: [{ sku: "abc", qty: 1 }, { sku: "x", qty: 0 }, { qty: 2 }] } })),
    [
      {
        field: "body.order.items[1].sku",
        message: "body.order.items[1].sku must be at least 3 characters",
      },
      { field: "body.order.items[1].qty", message: "body.order.items[1].qty must be >= 1" },
      { field: "body.order.items[2].sku", message: "body.order.items[2].sku is required" },
    ],
  );
  const m = compile({ grid: ArrayOf(ArrayOf(Int)) }, "body");
  assert.deepEqual(errors(m({ grid: [[1], [2, "x"]] })), [
    { field: "body.grid[1][1]", message: "body.grid[1][1] must be an integer" },
  ]);
});

Deno.test("compile() reports several errors in schema order, joined by joinMessages()", () => {
  const v = compile({ a: String, b: Int, c: Email }, "body");
  const r = v({ c: "x", b: "y" });
  assert.equal(r.ok, false);
  if (!r.ok) {
    assert.equal(
      joinMessages(r.errors),
      "body.a is required; body.b must be an integer; body.c must be a valid email address",
    );
  }
});

Deno.test("compile() caps errors at 100", () => {
  const v = compile({ xs: ArrayOf(Int) }, "body");
  const r = v({ xs: Array.from({ length: 5000 }, () => "no") });
  assert.equal(r.ok, false);
  if (!r.ok) {
    assert.equal(r.errors.length, 100);
    assert.equal(r.errors[99].field, "body.xs[99]");
  }
});

Deno.test("compile() treats absent and undefined as missing, null as the wrong type", () => {
  const v = compile({ a: Optional(String), b: Optional(Int) }, "body");
  assert.deepEqual(v({}), { ok: true, value: {} });
  assert.deepEqual(v({ a: undefined }), { ok: true, value: {} });
  assert.deepEqual(errors(v({ a: null })), [{
    field: "body.a",
    message: "body.a must be a string",
  }]);
  assert.deepEqual(errors(v({ b: "x" })), [{
    field: "body.b",
    message: "body.b must be an integer",
  }]);
});

Deno.test("compile() rejects a non-object body with the area as field", () => {
  const v = compile({ a: String }, "body");
  for (const input of [null, [], "x", 1, true, undefined]) {
    assert.deepEqual(errors(v(input)), [{ field: "body", message: "body must be an object" }]);
  }
  const p = compile({ a: String }, "payload");
  assert.deepEqual(errors(p(7)), [{ field: "payload", message: "payload must be an object" }]);
});

Deno.test("compile() never lets __proto__ or constructor keys through", () => {
  const v = compile({ name: String, toString: Optional(String) }, "body");
  const input = JSON.parse('{"name":"x","__proto__":{"admin":true},"constructor":{"prototype":1}}');
  const r = v(input);
  assert.equal(r.ok, true);
  if (r.ok) {
    assert.deepEqual(Object.keys(r.value), ["name"]);
    assert.equal(Object.getPrototypeOf(r.value), Object.prototype);
    assert.equal(({} as Record<string, unknown>).admin, undefined);
  }
  assert.deepEqual(v({ name: "y" }), { ok: true, value: { name: "y" } });
});

Deno.test("compile() coerces path params to numbers, integers and booleans", () => {
  const v = compile({ id: Int, ratio: Number, flag: Boolean, slug: String }, "params");
  assert.deepEqual(v({ id: "42", ratio: "0.5", flag: "true", slug: "007" }), {
    ok: true,
    value: { id: 42, ratio: 0.5, flag: true, slug: "007" },
  });
  assert.deepEqual(v({ id: "4.2", ratio: "", flag: "yes", slug: "a" }).ok, false);
  assert.deepEqual(errors(v({ id: "abc", ratio: " 1", flag: "0", slug: "a" })), [
    { field: "params.id", message: "params.id must be an integer" },
    { field: "params.ratio", message: "params.ratio must be a number" },
  ]);
  for (const [s, b] of [["1", true], ["0", false], ["false", false]] as const) {
    const r = v({ id: "1", ratio: "1", flag: s, slug: "a" });
    assert.equal(r.ok && r.value.flag, b);
  }
});

Deno.test("compile() reads query strings: repeated keys fill ArrayOf, scalars take the first", () => {
  const v = compile({ tag: ArrayOf(String), limit: Optional(Max(100, Int)), page: Int }, "query");
  assert.deepEqual(v(new URLSearchParams("tag=a&tag=b&limit=10&limit=20&page=2")), {
    ok: true,
    value: { tag: ["a", "b"], limit: 10, page: 2 },
  });
  assert.deepEqual(errors(v(new URLSearchParams("limit=500"))), [
    { field: "query.tag", message: "query.tag is required" },
    { field: "query.limit", message: "query.limit must be <= 100" },
    { field: "query.page", message: "query.page is required" },
  ]);
  const ints = compile({ id: ArrayOf(Int) }, "query");
  assert.deepEqual(ints(new URLSearchParams("id=1&id=2")), { ok: true, value: { id: [1, 2] } });
  assert.deepEqual(errors(ints(new URLSearchParams("id=1&id=x"))), [
    { field: "query.id[1]", message: "query.id[1] must be an integer" },
  ]);
  assert.deepEqual(ints({ id: "3" }), { ok: true, value: { id: [3] } });
});

Deno.test("compile() keeps body types strict: no coercion", () => {
  const v = compile({ n: Int, b: Boolean }, "body");
  assert.deepEqual(errors(v({ n: "1", b: "true" })), [
    { field: "body.n", message: "body.n must be an integer" },
    { field: "body.b", message: "body.b must be a boolean" },
  ]);
});

Deno.test("compile() rejects nested objects in params and query at compile time", () => {
  assert.throws(
    () => compile({ filter: { a: String } }, "query"),
    /Invalid schema at "query\.filter": query fields must be scalars or ArrayOf\(scalar\)/,
  );
  assert.throws(() => compile({ ids: ArrayOf(Int) }, "params"), /"params\.ids": params fields/);
  assert.throws(() => compile(String, "query"), /query schemas must be an object/);
  // @ts-expect-error: unknown area on purpose
  assert.throws(() => compile({}, "cookies"), /Invalid input area "cookies"/);
});

Deno.test("compile() validates Stream(T) messages, named schemas and Desc", () => {
  const Msg = schema("Msg", { text: Desc("The text", MinLength(1)) });
  const v = compile(Stream(Msg), "message");
  assert.deepEqual(v({ text: "hi" }), { ok: true, value: { text: "hi" } });
  assert.deepEqual(errors(v({ text: "" })), [
    { field: "message.text", message: "message.text must be at least 1 characters" },
  ]);
  assert.equal(compile(Msg, "body"), compile(Msg, "body"));
  const top = compile(ArrayOf(Int), "body");
  assert.deepEqual(top([1, 2]), { ok: true, value: [1, 2] });
  assert.deepEqual(errors(top({})), [{ field: "body", message: "body must be an array" }]);
});

Deno.test("compile() checks formats precisely", () => {
  const v = compile({ id: Uuid, at: DateIso, email: Email, url: Url }, "body");
  const good = [
    {
      id: UUID,
      at: "2024-02-29T23:59:59.123Z",
      email: "a.b+c@example.co.uk",
      url: "https://x.io/a?b",
    },
    { id: UUID.toUpperCase(), at: "2026-11-22T10:00+02:00", email: "x@y.dev", url: "mailto:a@b.c" },
  ];
  for (const g of good) assert.equal(v(g).ok, true, JSON.stringify(g));
  const bad = [
    { id: "7c9e6679742540de944be07fc1f90ae7", at: "2023-02-29T00:00Z", email: "a@b", url: "/rel" },
    { id: `${UUID}0`, at: "2026-13-01T00:00Z", email: "a b@c.de", url: "http//x" },
    { id: "g".repeat(36), at: "2026-11-22", email: "@c.de", url: "" },
  ];
  for (const b of bad) {
    const r = v(b);
    assert.equal(r.ok ? 0 : r.errors.length, 4, JSON.stringify(b));
  }
});

Deno.test("compile() never throws on any JSON value, however deep", () => {
  const v = compile({ a: { b: ArrayOf({ c: Int }) } }, "body");
  let deep: unknown = 1;
  for (let i = 0; i < 10_000; i++) deep = [deep];
  for (
    const input of [deep, { a: deep }, { a: { b: deep } }, { a: { b: [deep] } }, Symbol.iterator]
  ) {
    assert.equal(v(input).ok, false);
  }
});

Deno.test("copierOf() copies a validated value as validating it again would", () => {
  const validate = compile({
    id: Uuid,
    name: MinLength(1),
    note: Optional(String),
    toString: Optional(Int),
    lines: ArrayOf({ sku: String, qty: Int, tags: ArrayOf(String) }),
    address: { city: String, zip: Optional(String) },
    grid: ArrayOf(ArrayOf(Int)),
  }, "payload");
  const copy = copierOf(validate)!;
  for (
    const input of [
      { id: UUID, name: "a", lines: [], address: { city: "x" }, grid: [], extra: 1 },
      {
        id: UUID,
        name: "b",
        note: "n",
        toString: 3,
        lines: [{ sku: "s", qty: 2, tags: ["t", "u"], more: true }],
        address: { city: "y", zip: "z" },
        grid: [[1, 2], [], [3]],
      },
    ]
  ) {
    const checked = validate(input);
    assert.ok(checked.ok);
    const copied = copy(checked.value);
    assert.deepEqual(copied, (validate(checked.value) as { value: unknown }).value);
    assert.deepEqual(Object.keys(copied), Object.keys(checked.value));
    // fresh objects and arrays all the way down
    assert.notEqual(copied, checked.value);
    assert.notEqual(copied.lines, checked.value.lines);
    assert.notEqual(copied.address, checked.value.address);
    assert.notEqual(copied.grid, checked.value.grid);
    if (copied.lines.length) assert.notEqual(copied.lines[0].tags, checked.value.lines[0].tags);
  }
  // an absent optional key named like an Object.prototype member stays absent
  const checked = validate({ id: UUID, name: "c", lines: [], address: { city: "x" }, grid: [] });
  assert.ok(checked.ok);
  assert.equal(Object.hasOwn(copy(checked.value), "toString"), false);
  assert.equal(copierOf(validate), copy, "generated once per validator");
});

Deno.test("copierOf() copies scalar and stream roots, and has no copier for params or query", () => {
  assert.equal(copierOf(compile(Int, "payload"))!(3), 3);
  const items = compile(Stream({ n: Int }), "message") as unknown as (x: unknown) => {
    ok: true;
    value: unknown;
  };
  assert.deepEqual(copierOf(items)!({ n: 1 }), { n: 1 });
  assert.equal(copierOf(compile({ n: Int }, "query")), undefined);
  assert.equal(copierOf(compile({ n: Int }, "params")), undefined);
  assert.equal(copierOf(() => ({ ok: true, value: 1 })), undefined);
});
