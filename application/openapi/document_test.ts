import assert from "node:assert/strict";
import {
  ArrayOf,
  DateIso,
  Desc,
  Email,
  endpoint,
  Int,
  Max,
  MaxLength,
  Min,
  MinLength,
  type OpenApiDocument,
  Optional,
  Pattern,
  schema,
  Url,
  Uuid,
} from "../mod.ts";
import { openApiDocument } from "./document.ts";
import { toJsonSchema } from "@fw/runtime/json-schema";
import {
  documentOf,
  error,
  handler,
  info,
  json,
  operationOf,
  R2XX,
  R400,
  R406,
  R500,
  type Route,
} from "../testdata/openapi_helpers.ts";

Deno.test("openApiDocument() documents a bare endpoint with 400, 500 and 2XX", () => {
  const { doc, op } = operationOf(endpoint(() => "ok"), "GET", "/health");
  assert.deepEqual(op, {
    operationId: "getHealth",
    tags: ["health"],
    responses: { "400": R400, "406": R406, "500": R500, "2XX": R2XX },
  });
  assert.equal(doc.openapi, "3.0.3");
  assert.deepEqual(doc.info, info);
  assert.deepEqual(Object.keys(doc.components.schemas), [
    "ErrorResponse",
    "ValidationErrorResponse",
  ]);
  assert.equal(doc.components.securitySchemes, undefined);
});

Deno.test("openApiDocument() turns .params() into required {name} path parameters", () => {
  const def = endpoint()
    .params({ id: Desc("The order id", Uuid), line: Max(99, Min(1, Int)) })
    .handle(handler);
  const { op } = operationOf(def, "GET", "/orders/:id/lines/:line");
  assert.equal(op.operationId, "getOrdersByIdLinesByLine");
  assert.deepEqual(op.parameters, [
    {
      name: "id",
      in: "path",
      required: true,
      description: "The order id",
      schema: toJsonSchema(Uuid),
    },
    {
      name: "line",
      in: "path",
      required: true,
      schema: { type: "integer", minimum: 1, maximum: 99 },
    },
  ]);
  const catchAll = operationOf(endpoint(handler), "GET", "/files/*path").op;
  assert.deepEqual(catchAll.parameters, [{
    name: "path",
    in: "path",
    required: true,
    description: 'The rest of the path; it may contain "/"',
    schema: { type: "string" },
  }]);
  assert.throws(
    () => documentOf([["GET", "/a", endpoint().params({ id: Int }).handle(handler)]]),
    {
      name: "TypeError",
      message: 'Cannot document route "GET /a": .params() declares "id", ' +
        "which is not a parameter of the path",
    },
  );
});

Deno.test("openApiDocument() turns .query() into query parameters with required flags", () => {
  const def = endpoint().query({
    q: Desc("Search text", MaxLength(50, MinLength(2))),
    tags: Optional(ArrayOf(Pattern(/^[a-z]+$/))),
    since: Optional(DateIso),
    home: Optional(Url),
  }).handle(handler);
  assert.deepEqual(operationOf(def).op.parameters, [
    {
      name: "q",
      in: "query",
      required: true,
      description: "Search text",
      schema: { type: "string", minLength: 2, maxLength: 50 },
    },
    {
      name: "tags",
      in: "query",
      required: false,
      style: "form",
      explode: true,
      schema: { type: "array", items: { type: "string", pattern: "^[a-z]+$" } },
    },
    {
      name: "since",
      in: "query",
      required: false,
      schema: toJsonSchema(DateIso),
    },
    { name: "home", in: "query", required: false, schema: toJsonSchema(Url) },
  ]);
});

Deno.test("openApiDocument() documents .body() as JSON with named schemas in components", () => {
  const Address = schema("Address", { city: String });
  const NewUser = schema("NewUser", {
    email: Email,
    age: Optional(Min(0, Int)),
    home: Desc("Where the user lives", Address),
    past: ArrayOf(Address),
  });
  const { doc, op } = operationOf(endpoint().body(NewUser).handle(handler), "POST", "/users");
  assert.deepEqual(op.requestBody, {
    required: true,
    content: json({ $ref: "#/components/schemas/NewUser" }),
  });
  assert.deepEqual(op.responses, {
    "400": R400,
    "413": error("Payload Too Large: the body exceeds the server's limit"),
    "415": error("Unsupported Media Type: the body must be application/json"),
    "406": R406,
    "500": R500,
    "2XX": R2XX,
  });
  assert.deepEqual(Object.keys(doc.components.schemas), [
    "Address",
    "ErrorResponse",
    "NewUser",
    "ValidationErrorResponse",
  ]);
  assert.deepEqual(doc.components.schemas.NewUser, {
    type: "object",
    properties: {
      email: toJsonSchema(Email),
      age: { type: "integer", minimum: 0 },
      home: {
        allOf: [{ $ref: "#/components/schemas/Address" }],
        description: "Where the user lives",
      },
      past: { type: "array", items: { $ref: "#/components/schemas/Address" } },
    },
    required: ["email", "home", "past"],
  });
  const inline = operationOf(endpoint().body({ note: Optional(String) }).handle(handler), "PUT");
  assert.deepEqual(inline.op.requestBody, {
    required: true,
    content: json({ type: "object", properties: { note: { type: "string" } } }),
  });
});

Deno.test("openApiDocument() output does not depend on route order", () => {
  const routes: Route[] = [
    ["POST", "/users", endpoint().body(schema("B", { b: Int })).handle(handler)],
    ["GET", "/users/:id", endpoint().returns(schema("A", { a: Int })).handle(handler)],
    ["DELETE", "/users/:id", endpoint(handler)],
    ["GET", "/users", endpoint(handler)],
    ["GET", "/", endpoint(handler)],
    ["GET", "/users-list", endpoint(handler)],
    ["GET", "/users/list", endpoint(handler)],
  ];
  const one = JSON.stringify(documentOf(routes));
  const two = JSON.stringify(documentOf([...routes].reverse()));
  assert.equal(one, two);
  const doc = JSON.parse(one) as OpenApiDocument;
  assert.deepEqual(Object.keys(doc.paths), [
    "/",
    "/users",
    "/users-list",
    "/users/list",
    "/users/{id}",
  ]);
  assert.deepEqual(Object.keys(doc.paths["/users/{id}"]), ["get", "delete"]);
  const ids = Object.values(doc.paths).flatMap((item) =>
    Object.values(item).map((o) => o.operationId)
  );
  assert.deepEqual(ids, [
    "get",
    "getUsers",
    "postUsers",
    "getUsersList",
    "getUsersList2",
    "getUsersById",
    "deleteUsersById",
  ]);
  assert.deepEqual(doc.tags, [{ name: "users" }, { name: "users-list" }]);
  assert.deepEqual(Object.keys(doc.components.schemas), [
    "A",
    "B",
    "ErrorResponse",
    "ValidationErrorResponse",
  ]);
});

Deno.test("openApiDocument() leaves the prefix out of tags and keeps servers", () => {
  const doc = documentOf([["GET", "/v1/users", endpoint(handler)], [
    "GET",
    "/v1",
    endpoint(handler),
  ]], {
    prefix: "/v1",
    servers: [{ url: "https://api.example.com", description: "Production" }],
  });
  assert.deepEqual(doc.paths["/v1/users"].get.tags, ["users"]);
  assert.equal(doc.paths["/v1"].get.tags, undefined);
  assert.deepEqual(doc.servers, [{ url: "https://api.example.com", description: "Production" }]);
});

Deno.test("openApiDocument() rejects two schemas with one name and invalid info, naming them", () => {
  assert.throws(
    () =>
      documentOf([
        ["GET", "/a", endpoint().returns(schema("User", { id: Int })).handle(handler)],
        ["GET", "/b", endpoint().returns(schema("User", { id: String })).handle(handler)],
      ]),
    {
      name: "TypeError",
      message:
        'Cannot document route "GET /b": Schema name "User" is used by two different schemas',
    },
  );
  assert.throws(
    () =>
      documentOf([[
        "GET",
        "/a",
        endpoint().returns(schema("ErrorResponse", { x: Int })).handle(handler),
      ]]),
    /Schema name "ErrorResponse" is used by two different schemas/,
  );
  assert.throws(
    () => openApiDocument([], { info: { title: "", version: "1" } }),
    {
      name: "TypeError",
      message: 'openApiDocument(): "info.title" must be a non-empty string, got ""',
    },
  );
  assert.throws(
    () => openApiDocument([], { info: { title: "T" } } as never),
    /"info.version" must be a non-empty string, got undefined/,
  );
});
