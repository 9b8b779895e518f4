import assert from "node:assert/strict";
import { Int, Optional, provider, schema, Stream } from "@fw/runtime";
import { endpoint, isEndpoint } from "./endpoint.ts";

Deno.test("endpoint(fn) defines a unary endpoint with empty metadata", () => {
  const def = endpoint(() => "hi");
  assert.equal(def.kind, "fw.endpoint");
  assert.equal(def.mode, "unary");
  assert.deepEqual(def.meta, { responses: [], mayThrow: [], throws: [] });
  assert.ok(Object.isFrozen(def));
});

Deno.test("endpoint() builder records every declaration in meta", () => {
  const User = schema("User", { id: Int, name: String });
  const Db = provider({ name: "Db", factory: () => ({}) });
  const guard = () => true;
  const def = endpoint()
    .params({ id: Int })
    .query({ q: Optional(String) })
    .body({ name: String })
    .returns(201, "Created", User)
    .response(202, "Queued", { ticket: String })
    .mayThrow("NotFound", "Conflict")
    .throws(409, "Duplicate name")
    .description("Creates a user")
    .cors({ origin: "https://app.example", credentials: true })
    .rateLimit({ max: 10, windowMs: 60_000 })
    .secure(guard)
    .inject({ db: Db })
    .handle(() => undefined);
  const m = def.meta;
  assert.equal(m.params?.properties?.id.kind, "integer");
  assert.equal(m.query?.properties?.q.optional, true);
  assert.equal(m.body?.properties?.name.kind, "string");
  assert.deepEqual(m.returns, { status: 201, description: "Created", schema: User.node });
  assert.equal(m.responses[0].status, 202);
  assert.equal(m.responses[0].schema?.properties?.ticket.kind, "string");
  assert.deepEqual(m.mayThrow, ["NotFound", "Conflict"]);
  assert.deepEqual(m.throws, [{ status: 409, description: "Duplicate name", schema: undefined }]);
  assert.equal(m.description, "Creates a user");
  assert.deepEqual(m.cors, { origin: "https://app.example", credentials: true });
  assert.deepEqual(m.rateLimit, { max: 10, windowMs: 60_000 });
  assert.deepEqual(m.secure, { scopes: [], roles: [], guard });
  assert.equal(m.inject?.db, Db);
});

Deno.test("endpoint().returns(schema) defaults to status 200", () => {
  const def = endpoint().returns({ ok: Boolean }).handle(() => ({ ok: true }));
  assert.equal(def.meta.returns?.status, 200);
  assert.equal(endpoint().returns(204).handle(() => {}).meta.returns?.schema, undefined);
});

Deno.test("endpoint().secure() stores scopes and roles, or login only", () => {
  assert.deepEqual(endpoint().secure().handle(() => "").meta.secure, { scopes: [], roles: [] });
  const meta =
    endpoint().secure({ scopes: ["users:write"], roles: ["admin"] }).handle(() => "").meta;
  assert.deepEqual(meta.secure, { scopes: ["users:write"], roles: ["admin"] });
});

Deno.test("endpoint().throws() replaces an earlier entry with the same status", () => {
  const def = endpoint().throws(404, "Missing").throws(404, "No such user").handle(() => "");
  assert.deepEqual(def.meta.throws.map((t) => t.description), ["No such user"]);
});

Deno.test("endpoint() builders are immutable and can be shared", () => {
  const base = endpoint().secure();
  const a = base.params({ id: Int }).handle(() => "a");
  const b = base.handle(() => "b");
  assert.ok(a.meta.params);
  assert.equal(b.meta.params, undefined);
  assert.deepEqual(b.meta.secure, { scopes: [], roles: [] });
});

Deno.test("endpoint() derives the mode from Stream() in .body() and .returns()", () => {
  const msg = { text: String };
  assert.equal(endpoint().body(msg).returns(msg).handle(() => undefined).mode, "unary");
  assert.equal(endpoint().returns(Stream(msg)).handle(() => {}).mode, "server-stream");
  assert.equal(
    endpoint().body(Stream(msg)).returns(msg).handle(() => undefined).mode,
    "client-stream",
  );
  assert.equal(endpoint().body(Stream(msg)).returns(Stream(msg)).handle(() => {}).mode, "bidi");
});

Deno.test("endpoint() rejects bad declarations when the route file loads", () => {
  // deno-lint-ignore no-explicit-any
  const b = endpoint() as any;
  const cases: [() => unknown, string, string | RegExp][] = [
    [
      () => b.params(Int),
      "TypeError",
      "Invalid .params() schema: expected an object of schemas, got a integer schema",
    ],
    [
      () => b.params({ id: Optional(Int) }),
      "TypeError",
      "Invalid .params() schema: path parameters cannot be Optional()",
    ],
    [() => b.query({ q: 5 }), "TypeError", /Invalid schema at "\.query\(\)\.q"/],
    [
      () => b.returns(42),
      "RangeError",
      "Invalid status 42 in .returns(): expected an integer from 100 to 599",
    ],
    [
      () => b.throws(200, "ok"),
      "RangeError",
      "Invalid status 200 in .throws(): expected an integer from 400 to 599",
    ],
    [
      () => b.response(201),
      "TypeError",
      "Invalid .response() description: expected a string, got undefined",
    ],
    [
      () => b.mayThrow("Oops"),
      "TypeError",
      /^Invalid \.mayThrow\(\) code "Oops": expected one of BadRequest, /,
    ],
    [
      () => b.cors({ credentials: true }),
      "TypeError",
      'Invalid .cors() options: origin "*" cannot be used with credentials: true',
    ],
    [
      () => b.rateLimit({ max: 0, windowMs: 1000 }),
      "RangeError",
      'Invalid .rateLimit() option "max": expected a positive integer, got 0',
    ],
    [
      () => b.rateLimit({ max: 1, windowMs: -1 }),
      "RangeError",
      'Invalid .rateLimit() option "windowMs": expected a positive number, got -1',
    ],
    [
      () => b.secure({ scopes: "a" }),
      "TypeError",
      'Invalid .secure() option "scopes": expected an array of strings',
    ],
    [
      () => b.inject({ db: {} }),
      "TypeError",
      'Invalid .inject() provider "db": expected a provider made with provider()',
    ],
    [
      () => b.handle("nope"),
      "TypeError",
      "Invalid endpoint handler: expected a function, got string",
    ],
    [
      () => endpoint(5 as never),
      "TypeError",
      "Invalid endpoint handler: expected a function, got number",
    ],
  ];
  for (const [fn, name, message] of cases) assert.throws(fn, { name, message });
});

Deno.test("isEndpoint() recognises definitions only", () => {
  assert.equal(isEndpoint(endpoint().handle(() => "")), true);
  assert.equal(isEndpoint(endpoint()), false);
  assert.equal(isEndpoint(null), false);
  assert.equal(isEndpoint({ kind: "fw.endpoint" }), false);
});
