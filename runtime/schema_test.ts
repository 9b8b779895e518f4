import assert from "node:assert/strict";
import {
  ArrayOf,
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
  toSchemaNode,
} from "./schema.ts";

Deno.test("toSchemaNode() normalises primitives, nested objects and vocabulary values", () => {
  assert.deepEqual(toSchemaNode({ a: String, b: { c: Number, d: Boolean } }), {
    kind: "object",
    properties: {
      a: { kind: "string" },
      b: { kind: "object", properties: { c: { kind: "number" }, d: { kind: "boolean" } } },
    },
  });
});

Deno.test("constraints compose with the narrowed schema as last argument", () => {
  assert.deepEqual(Max(10, Min(0, Int)).node, { kind: "integer", minimum: 0, maximum: 10 });
  assert.deepEqual(MaxLength(80, Email).node, { kind: "string", format: "email", maxLength: 80 });
  assert.deepEqual(Optional(MinLength(3)).node, { kind: "string", minLength: 3, optional: true });
  assert.deepEqual(Pattern(/x/g, MinLength(1)).node.pattern?.flags, "");
  assert.equal(Desc("d", Optional(Int)).node.optional, true);
  assert.deepEqual(ArrayOf(Int).node, { kind: "array", items: { kind: "integer" } });
});

Deno.test("invalid schemas fail when built, naming the property path", () => {
  // @ts-expect-error: wrong argument type on purpose
  assert.throws(() => Min("x"), /Min\(\) expects a finite number, got "x"/);
  assert.throws(() => MinLength(-1), /MinLength\(\) expects a non-negative integer, got -1/);
  // @ts-expect-error: wrong argument type on purpose
  assert.throws(() => Pattern("^a$"), /Pattern\(\) expects a RegExp/);
  // @ts-expect-error: a string constraint cannot narrow a number
  assert.throws(() => MinLength(1, Int), /MinLength\(\) cannot narrow a integer schema/);
  assert.throws(() => Min(0, Optional(Int)), /cannot narrow a optional integer schema/);
  assert.throws(
    () => schema("User", { name: String, address: { zip: 42 as never } }),
    /"User\.address\.zip": expected a schema, got 42/,
  );
  assert.throws(
    () => toSchemaNode({ a: [String] }),
    /"schema\.a": expected a schema, got an array/,
  );
  assert.throws(() => toSchemaNode(JSON.parse('{"__proto__": 1}')), /"__proto__" is not allowed/);
  assert.throws(() => schema("bad name", {}), /Invalid schema name "bad name"/);
  assert.throws(() => ArrayOf(Optional(Int)), /elements cannot be optional/);
  assert.throws(() => Stream(Stream(Int)), /Stream\(\) cannot wrap Stream\(\)/);
  assert.throws(() => Optional(Stream(Int)), /Optional\(\) cannot wrap Stream\(\)/);
});

Deno.test("schema() names reusable schemas and freezes nodes", () => {
  const User = schema("User", { id: Int });
  assert.equal(User.node.name, "User");
  assert.equal(schema({ id: Int }).node.name, undefined);
  assert.ok(Object.isFrozen(User.node));
});
