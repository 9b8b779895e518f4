import assert from "node:assert/strict";
import { toJsonSchema } from "./json_schema.ts";
import {
  DATE_TIME_PATTERN,
  EMAIL_PATTERN,
  isDateTime,
  isEmail,
  isUuid,
  URL_PATTERN,
  UUID_PATTERN,
} from "./_formats.ts";
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
  toSchemaNode,
  Url,
  Uuid,
} from "./schema.ts";

Deno.test("toJsonSchema() writes types, formats, constraints and descriptions", () => {
  assert.deepEqual(
    toJsonSchema({
      id: Desc("The id", Uuid),
      email: Email,
      url: Url,
      at: Optional(DateIso),
      n: Max(10, Min(1, Int)),
      name: MaxLength(20, MinLength(2)),
      code: Pattern(/^[A-Z]{3}$/),
      tags: ArrayOf(String),
      ok: Boolean,
      ratio: Number,
    }),
    {
      type: "object",
      properties: {
        id: { type: "string", format: "uuid", description: "The id", pattern: UUID_PATTERN },
        email: {
          type: "string",
          format: "email",
          maxLength: 254,
          pattern: EMAIL_PATTERN,
          example: "user@example.com",
        },
        url: {
          type: "string",
          format: "uri",
          description: "An absolute URL that the WHATWG URL parser accepts.",
          pattern: URL_PATTERN,
        },
        at: {
          type: "string",
          format: "date-time",
          description: "An ISO 8601 date-time: seconds, a fraction of up to 9 digits and the " +
            "zone offset are optional (RFC 3339 requires them); the pattern is the rule.",
          pattern: DATE_TIME_PATTERN,
        },
        n: { type: "integer", minimum: 1, maximum: 10 },
        name: { type: "string", minLength: 2, maxLength: 20 },
        code: { type: "string", pattern: "^[A-Z]{3}$" },
        tags: { type: "array", items: { type: "string" } },
        ok: { type: "boolean" },
        ratio: { type: "number" },
      },
      required: ["id", "email", "url", "n", "name", "code", "tags", "ok", "ratio"],
    },
  );
});

Deno.test("toJsonSchema() states each format's rule as the pattern the validator applies", () => {
  const doc = toJsonSchema({ id: Uuid, email: Email, at: DateIso }) as {
    properties: Record<string, { pattern: string }>;
  };
  const check = { id: isUuid, email: isEmail, at: isDateTime };
  const samples = [
    "7c9e6679-7425-40de-944b-e07fc1f90ae7",
    "2dccfb99-4489-d344-49f3-94b26570ae08",
    "ada@example.com",
    "ada@localhost",
    "2026-11-22T10:00:00Z",
    "2026-02-29T10:00:00Z",
    "2028-02-29T10:00",
  ];
  for (const [key, accepts] of Object.entries(check)) {
    const pattern = new RegExp(doc.properties[key].pattern);
    for (const s of samples) assert.equal(pattern.test(s), accepts(s), `${key}: ${s}`);
  }
});

Deno.test("toJsonSchema() keeps the shorter email length and states patterns OpenAPI cannot carry", () => {
  assert.deepEqual(toJsonSchema(MaxLength(80, Email)), {
    type: "string",
    format: "email",
    maxLength: 80,
    pattern: EMAIL_PATTERN,
    example: "user@example.com",
  });
  assert.equal(toJsonSchema(MaxLength(10, Email)).example, undefined);
  assert.deepEqual(toJsonSchema(Desc("A code", Pattern(/^[a-z]+$/i))), {
    type: "string",
    description: "A code\n\nMust match the regular expression `/^[a-z]+$/i` " +
      "(flags cannot be written in an OpenAPI pattern).",
  });
  assert.deepEqual(toJsonSchema(Pattern(/^7/, Uuid)), {
    type: "string",
    format: "uuid",
    pattern: UUID_PATTERN,
    allOf: [{ pattern: "^7" }],
  });
});

Deno.test("toJsonSchema() omits an empty required list and unwraps Stream()", () => {
  assert.deepEqual(toJsonSchema({ a: Optional(String) }), {
    type: "object",
    properties: { a: { type: "string" } },
  });
  assert.deepEqual(toJsonSchema(Stream({ t: String })), {
    type: "object",
    properties: { t: { type: "string" } },
    required: ["t"],
  });
});

Deno.test("toJsonSchema() puts named schemas in components once and refers to them", () => {
  const Item = schema("Item", { sku: String });
  const Order = schema("Order", { items: ArrayOf(Item), main: Desc("Main item", Item) });
  const components: Record<string, Record<string, unknown>> = {};
  assert.deepEqual(toJsonSchema(Order, { components }), { $ref: "#/components/schemas/Order" });
  assert.deepEqual(Object.keys(components), ["Order", "Item"]);
  assert.deepEqual(components.Order, {
    type: "object",
    properties: {
      items: { type: "array", items: { $ref: "#/components/schemas/Item" } },
      main: { allOf: [{ $ref: "#/components/schemas/Item" }], description: "Main item" },
    },
    required: ["items", "main"],
  });
  assert.deepEqual(toJsonSchema(Order).type, "object");
  assert.deepEqual(toJsonSchema(toSchemaNode({ a: Int })).properties, { a: { type: "integer" } });
});

Deno.test("toJsonSchema() rejects two different schemas with the same name", () => {
  const components: Record<string, Record<string, unknown>> = {};
  toJsonSchema(schema("User", { name: String }), { components });
  toJsonSchema(Desc("Same one", schema("User", { name: String })), { components });
  assert.throws(
    () => toJsonSchema({ u: schema("User", { email: Email }) }, { components }),
    { name: "TypeError", message: 'Schema name "User" is used by two different schemas' },
  );
  assert.throws(
    () => toJsonSchema(schema("Box", { inner: schema("Box", { n: Int }) }), { components: {} }),
    /Schema name "Box" is used by two different schemas/,
  );
});
