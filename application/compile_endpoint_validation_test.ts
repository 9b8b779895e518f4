import assert from "node:assert/strict";
import {
  ArrayOf,
  DateIso,
  Email,
  Int,
  Max,
  MaxLength,
  Min,
  MinLength,
  Optional,
  Pattern,
  Url,
  Uuid,
} from "@fw/runtime";
import { endpoint } from "./endpoint.ts";
import { call, post, testApp } from "./testdata/app_context.ts";

interface ValidationBody {
  message: string;
  errors: { field: string; message: string }[];
}

async function rejected(res: Response): Promise<ValidationBody> {
  assert.equal(res.status, 400);
  assert.equal(res.headers.get("content-type"), "application/json");
  return await res.json();
}

function spy() {
  const seen = { calls: 0 };
  return { seen, handler: () => (seen.calls++, "ok") };
}

const BODY = {
  id: Uuid,
  email: Email,
  name: String,
  age: Int,
  score: Number,
  active: Boolean,
  tags: ArrayOf(String),
  address: { city: String },
  site: Url,
  at: DateIso,
  min: Min(1),
  max: Max(10),
  short: MaxLength(3),
  long: MinLength(3),
  code: Pattern(/^[a-z]+$/),
};

Deno.test("compileEndpoint() reports every validation message form of spec 7.1 in schema order", async () => {
  const { seen, handler } = spy();
  const def = endpoint().body(BODY).handle(handler);
  const res = await call(
    def,
    post(
      "/things",
      JSON.stringify({
        id: "not-a-uuid",
        email: "nope",
        age: 1.5,
        score: "7",
        active: "yes",
        tags: [1],
        address: [],
        site: "not a url",
        at: "yesterday",
        min: 0,
        max: 11,
        short: "abcd",
        long: "ab",
        code: "ABC",
      }),
    ),
  );
  const body = await rejected(res);
  const expected = [
    ["body.id", "body.id must be a valid UUID"],
    ["body.email", "body.email must be a valid email address"],
    ["body.name", "body.name is required"],
    ["body.age", "body.age must be an integer"],
    ["body.score", "body.score must be a number"],
    ["body.active", "body.active must be a boolean"],
    ["body.tags[0]", "body.tags[0] must be a string"],
    ["body.address", "body.address must be an object"],
    ["body.site", "body.site must be a valid URL"],
    ["body.at", "body.at must be a valid ISO 8601 date-time"],
    ["body.min", "body.min must be >= 1"],
    ["body.max", "body.max must be <= 10"],
    ["body.short", "body.short must be at most 3 characters"],
    ["body.long", "body.long must be at least 3 characters"],
    ["body.code", "body.code must match pattern ^[a-z]+$"],
  ];
  assert.deepEqual(body.errors, expected.map(([field, message]) => ({ field, message })));
  assert.equal(body.message, expected.map(([, m]) => m).join("; "));
  assert.equal(seen.calls, 0);
});

Deno.test("compileEndpoint() reports a non-array where an array is declared", async () => {
  const def = endpoint().body({ tags: ArrayOf(String) }).handle(() => "ok");
  const body = await rejected(await call(def, post("/", '{"tags":"a"}')));
  assert.deepEqual(body.errors, [{ field: "body.tags", message: "body.tags must be an array" }]);
});

Deno.test("compileEndpoint() validates and coerces path params before the handler", async () => {
  const def = endpoint().params({ id: Int, slug: String }).handle((ctx) => ctx.params);
  const ok = await call(def, "/a/42/x", { params: { id: "42", slug: "x" } });
  assert.deepEqual(await ok.json(), { id: 42, slug: "x" });
  const { seen, handler } = spy();
  const bad = endpoint().params({ id: Uuid }).handle(handler);
  const body = await rejected(await call(bad, "/a/7", { params: { id: "7" } }));
  assert.deepEqual(body, {
    message: "params.id must be a valid UUID",
    errors: [{ field: "params.id", message: "params.id must be a valid UUID" }],
  });
  assert.equal(seen.calls, 0);
});

Deno.test("compileEndpoint() validates and coerces the query string", async () => {
  const def = endpoint()
    .query({ limit: Max(100, Int), desc: Optional(Boolean), q: Optional(String) })
    .handle((ctx) => ctx.queryParams());
  const ok = await call(def, "/s?limit=10&desc=1&q=a%20b");
  assert.deepEqual(await ok.json(), { limit: 10, desc: true, q: "a b" });
  const body = await rejected(await call(def, "/s?limit=500&desc=maybe"));
  assert.deepEqual(body.errors, [
    { field: "query.limit", message: "query.limit must be <= 100" },
    { field: "query.desc", message: "query.desc must be a boolean" },
  ]);
  const missing = await rejected(await call(def, "/s"));
  assert.deepEqual(missing.errors, [{ field: "query.limit", message: "query.limit is required" }]);
});

Deno.test("compileEndpoint() fills ArrayOf from repeated query keys and takes the first for scalars", async () => {
  const def = endpoint().query({ tag: ArrayOf(String), page: Int }).handle((ctx) =>
    ctx.queryParams()
  );
  const res = await call(def, "/s?tag=a&page=2&tag=b&page=9");
  assert.deepEqual(await res.json(), { tag: ["a", "b"], page: 2 });
});

Deno.test("compileEndpoint() gives raw query params (first value) without a .query() schema", async () => {
  const res = await call(endpoint((ctx) => ctx.queryParams()), "/s?a=1&a=2&b=x");
  assert.deepEqual(await res.json(), { a: "1", b: "x" });
});

Deno.test("compileEndpoint() hands the validated body to the handler without unknown keys", async () => {
  let seen: unknown;
  const def = endpoint().body({ name: String }).handle(async (ctx) => {
    seen = await ctx.body();
    return "ok";
  });
  const res = await call(
    def,
    post(
      "/",
      '{"name":"Ada","isAdmin":true,"__proto__":{"polluted":1},"constructor":{"prototype":{"x":1}}}',
    ),
  );
  assert.equal(res.status, 200);
  assert.deepEqual(seen, { name: "Ada" });
  assert.equal(Object.getPrototypeOf(seen), Object.prototype);
  assert.equal(({} as Record<string, unknown>).polluted, undefined);
});

Deno.test("compileEndpoint() never lets __proto__ reach a schema-less body", async () => {
  let seen: Record<string, unknown> = {};
  const def = endpoint(async (ctx) => {
    seen = (await ctx.body()) as Record<string, unknown>;
    return "ok";
  });
  await call(
    def,
    post("/", '{"a":{"__proto__":{"admin":true},"b":1},"\\u005f_proto__":{"admin":true}}'),
  );
  const a = seen.a as Record<string, unknown>;
  assert.equal(Object.getPrototypeOf(a), Object.prototype);
  assert.equal(Object.getPrototypeOf(seen), Object.prototype);
  assert.deepEqual(seen, { a: { b: 1 } });
});

Deno.test("compileEndpoint() answers 400 for a missing body on a .body() route", async () => {
  const { seen, handler } = spy();
  const def = endpoint().body({ name: String }).handle(handler);
  const req = new Request("http://localhost/", { method: "POST" });
  const body = await rejected(await call(def, req));
  assert.deepEqual(body.errors, [{ field: "body", message: "body is required" }]);
  assert.equal(seen.calls, 0);
});

Deno.test("compileEndpoint() answers 400 when the body is not an object", async () => {
  const def = endpoint().body({ name: String }).handle(() => "ok");
  for (const text of ["null", "[1]", '"str"']) {
    const body = await rejected(await call(def, post("/", text)));
    assert.deepEqual(body.errors, [{ field: "body", message: "body must be an object" }]);
  }
});

Deno.test("compileEndpoint() answers 400 with field body for malformed JSON", async () => {
  const { seen, handler } = spy();
  const def = endpoint().body({ name: String }).handle(handler);
  const body = await rejected(await call(def, post("/", '{"name": "Ada",')));
  assert.deepEqual(body, {
    message: "body must be valid JSON",
    errors: [{ field: "body", message: "body must be valid JSON" }],
  });
  assert.equal(seen.calls, 0);
});

Deno.test("compileEndpoint() answers 400 for JSON nested too deeply", async () => {
  const def = endpoint().body({ name: String }).handle(() => "ok");
  const deep = `{"name":"a","x":${"[".repeat(10_000)}${"]".repeat(10_000)}}`;
  const body = await rejected(await call(def, post("/", deep)));
  assert.deepEqual(body.errors, [
    { field: "body", message: "body must not be nested more than 64 levels deep" },
  ]);
});

Deno.test("compileEndpoint() answers 415 for a body with a non-JSON content type", async () => {
  const { seen, handler } = spy();
  const def = endpoint().body({ name: String }).handle(handler);
  const res = await call(
    def,
    post("/", "name=Ada", { "content-type": "application/x-www-form-urlencoded" }),
  );
  assert.equal(res.status, 415);
  assert.deepEqual(await res.json(), {
    statusCode: 415,
    message:
      'Unsupported Content-Type "application/x-www-form-urlencoded": expected application/json',
    error: "Unsupported Media Type",
  });
  assert.equal(seen.calls, 0);
});

Deno.test("compileEndpoint() accepts application/json with a charset and +json types", async () => {
  const def = endpoint().body({ name: String }).handle(async (ctx) => (await ctx.body()).name);
  for (const type of ["application/json", "application/merge-patch+json"]) {
    const res = await call(def, post("/", '{"name":"Ada"}', { "content-type": type }));
    assert.equal(await res.text(), "Ada");
  }
});

Deno.test("compileEndpoint() answers 413 from Content-Length before reading the body", async () => {
  const { app } = testApp({ http: { maxBodyBytes: 16 } });
  const def = endpoint().body({ name: String }).handle(() => "ok");
  const body = '{"name":"' + "x".repeat(32) + '"}';
  const res = await call(def, post("/", body, { "content-length": String(body.length) }), { app });
  assert.equal(res.status, 413);
  assert.deepEqual(await res.json(), {
    statusCode: 413,
    message: "Request body exceeds the limit of 16 bytes",
    error: "Payload Too Large",
  });
});

Deno.test("compileEndpoint() answers 413 while streaming a body without Content-Length", async () => {
  const { app } = testApp({ http: { maxBodyBytes: 1024 } });
  let pulled = 0;
  const stream = new ReadableStream<Uint8Array>({
    pull(controller) {
      pulled++;
      controller.enqueue(new TextEncoder().encode('{"name":"' + "x".repeat(500)));
      if (pulled > 100) controller.close();
    },
  });
  const req = new Request("http://localhost/", {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: stream,
  });
  const def = endpoint().body({ name: String }).handle(() => "ok");
  const res = await call(def, req, { app });
  assert.equal(res.status, 413);
  assert.ok(pulled < 10, `read ${pulled} chunks`);
});

Deno.test("compileEndpoint() reads a schema-less body only when the handler asks", async () => {
  const lazy = endpoint(() => "never read");
  const res = await call(lazy, post("/", "not json", { "content-type": "text/plain" }));
  assert.equal(res.status, 200);
  const eager = endpoint(async (ctx) => await ctx.body());
  const bad = await call(eager, post("/", "not json", { "content-type": "text/plain" }));
  assert.equal(bad.status, 415);
});
