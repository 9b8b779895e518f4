/**
 * The generated OpenAPI documents pass an offline validator (`@seriousme/openapi-schema-validator`)
 * and fw's semantic checks: the example app's, and one that uses every builder method. The
 * committed `examples/app/src/.gen/openapi.json` is what the app serves and what `generate`
 * writes.
 */

import assert from "node:assert/strict";
import {
  api,
  application,
  ArrayOf,
  Desc,
  Email,
  endpoint,
  Int,
  Optional,
  schema,
  Stream,
  Uuid,
} from "@fw/application";
import { generate } from "@fw/application/cli";
import { createLogger } from "@fw/runtime";
import { app } from "../examples/app/src/main.ts";
import { schemaErrors, semanticProblems } from "./_openapi_checks.ts";

const EXAMPLE = new URL("../examples/app/src/main.ts", import.meta.url);
const COMMITTED = new URL("../examples/app/src/.gen/openapi.json", import.meta.url);

Deno.test("the example app's openapi.json passes the validator and the semantic checks", async () => {
  const res = await app.request("/openapi.json");
  assert.equal(res.status, 200);
  const doc = await res.json();
  assert.deepEqual(await schemaErrors(doc), []);
  assert.deepEqual(semanticProblems(doc), []);
  assert.equal(doc.openapi, "3.0.3");
  assert.equal(doc.info.version, "1.0.0", "the configured openapi.version");
  assert.deepEqual(Object.keys(doc.paths), [
    "/audit",
    "/files/{path}",
    "/health",
    "/orders",
    "/redirect",
    "/search/users",
    "/users",
    "/users/{id}",
  ]);
  assert.deepEqual(Object.keys(doc.paths["/users/{id}"]), ["get", "put", "delete"]);
  assert.deepEqual(Object.keys(doc.paths["/users/{id}"].get.responses), [
    "200",
    "400",
    "404",
    "406",
    "500",
  ]);
  assert.deepEqual(doc.paths["/users"].post.requestBody.content["application/json"].schema, {
    $ref: "#/components/schemas/NewUser",
  });
});

Deno.test("the committed .gen/openapi.json is served as is and generate rewrites the same bytes", async () => {
  const before = await Deno.readTextFile(COMMITTED);
  const served = await (await app.request("/openapi.json")).text();
  assert.equal(served, before, "run `deno task generate` and commit examples/app/src/.gen/");
  const { written } = await generate(EXAMPLE.href);
  assert.ok(written.some((f) => f.endsWith("/.gen/openapi.json")));
  await generate(EXAMPLE.href);
  assert.equal(await Deno.readTextFile(COMMITTED), before);
});

const Address = schema("Address", { city: String, zip: Optional(String) });
const Customer = schema("Customer", {
  id: Desc("Customer id", Uuid),
  email: Email,
  addresses: ArrayOf(Address),
});
const Problem = schema("Problem", { title: String, status: Int });

/** One route per builder method (and per stream mode). */
function everyBuilderMethod() {
  const none = (): void => {};
  return api({ autoScan: false, openapi: { title: "Everything", version: "9.9.9" } })
    .throws(503, "Maintenance window")
    .route("GET", "/customers/:id", endpoint().params({ id: Uuid }).returns(Customer).handle(none))
    .route(
      "GET",
      "/customers",
      endpoint().query({ q: Optional(String), tag: Optional(ArrayOf(String)) }).returns(
        ArrayOf(Customer),
      ).handle(none),
    )
    .route(
      "POST",
      "/customers",
      endpoint().body(Customer).returns(201, "Created", Customer).response(
        202,
        "Queued",
        { ticket: Uuid },
      ).mayThrow("Conflict", "BadRequest").handle(none),
    )
    .route(
      "PUT",
      "/customers/:id",
      endpoint().params({ id: Uuid }).body(Customer).throws(409, "Stale", Problem).handle(none),
    )
    .route(
      "DELETE",
      "/customers/:id",
      endpoint().description("Remove").params({ id: Uuid }).returns(204).secure({
        scopes: ["customers:write"],
        roles: ["admin"],
      }).handle(none),
    )
    .route("GET", "/me", endpoint().secure().rateLimit({ max: 5, windowMs: 1000 }).handle(none))
    .route("GET", "/guarded", endpoint().secure(() => true).cors().handle(none))
    .route("GET", "/feed", endpoint().returns(Stream(Customer)).handle(none))
    .route(
      "GET",
      "/chat/:room",
      endpoint().body(Stream({ text: String })).returns(Stream({ text: String })).handle(none),
    )
    .route(
      "GET",
      "/upload",
      endpoint().body(Stream({ n: Int })).returns({ total: Int }).handle(none),
    )
    .route("GET", "/files/*path", endpoint(() => "file"));
}

Deno.test("a document using every builder method passes the validator and the semantic checks", async () => {
  const plugin = everyBuilderMethod();
  await application({ logger: createLogger({ level: "silent" }) }).use(plugin).warmup();
  const doc = plugin.openapi();
  assert.deepEqual(await schemaErrors(doc), []);
  assert.deepEqual(semanticProblems(doc), []);
  assert.equal(Object.values(doc.paths).flatMap((item) => Object.keys(item)).length, 11);
  assert.deepEqual(Object.keys(doc.components.schemas), [
    "Address",
    "Customer",
    "ErrorResponse",
    "Problem",
    "ValidationErrorResponse",
  ]);
  assert.ok(doc.components.securitySchemes?.bearerAuth);
});

Deno.test("the semantic checks report each broken rule", () => {
  const doc = {
    openapi: "3.0.3",
    info: { title: "Broken", version: "1" },
    paths: {
      "/a/{id}": {
        get: {
          operationId: "same",
          parameters: [{ name: "other", in: "path", required: true, schema: { type: "string" } }],
          responses: { "200": { description: "" } },
        },
        put: {
          operationId: "same",
          parameters: [{ name: "id", in: "path", required: false, schema: { type: "string" } }],
          responses: { "200": { description: "ok" } },
        },
      },
    },
    components: { schemas: { A: { type: "null" }, B: { type: "object", required: [] } } },
  };
  assert.deepEqual(semanticProblems(doc), [
    'GET /a/{id}: path parameter "id" is not declared',
    'GET /a/{id}: path parameter "other" is not in the path',
    "GET /a/{id}: response 200 has no description",
    'PUT /a/{id}: path parameter "id" is optional',
    'PUT /a/{id}: operationId "same" is also GET /a/{id}',
    '/components/schemas/A: type "null"',
    "/components/schemas/B: empty required list",
  ]);
});

Deno.test("the validator rejects what OpenAPI 3.0.3 forbids", async () => {
  const errors = await schemaErrors({
    openapi: "3.0.3",
    info: { title: "Broken", version: "1" },
    paths: { "/a": { get: { responses: { "200": {} } } } },
  });
  assert.ok(errors.some((e) => e.includes("description")), errors.join("\n"));
  assert.deepEqual(
    await schemaErrors({
      openapi: "3.0.3",
      info: { title: "Broken", version: "1" },
      paths: {
        "/a": {
          get: {
            responses: {
              "200": {
                description: "x",
                content: { "application/json": { schema: { $ref: "#/components/schemas/Nope" } } },
              },
            },
          },
        },
      },
    }),
    ["Can't resolve #/components/schemas/Nope"],
  );
});
