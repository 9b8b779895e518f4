import assert from "node:assert/strict";
import {
  ArrayOf,
  DateIso,
  Desc,
  Email,
  endpoint,
  type EndpointDefinition,
  Int,
  Max,
  MaxLength,
  Min,
  MinLength,
  type OpenApiDocument,
  openApiDocument,
  type OpenApiOperation,
  Optional,
  Pattern,
  schema,
  Stream,
  Url,
  Uuid,
} from "./mod.ts";
import { provider } from "@fw/runtime";

const info = { title: "Shapes", version: "2.0.0" };
const ERROR = { $ref: "#/components/schemas/ErrorResponse" };
const VALIDATION = { $ref: "#/components/schemas/ValidationErrorResponse" };
const json = (schema: unknown) => ({ "application/json": { schema } });
const R400 = { description: "Validation failed", content: json(VALIDATION) };
const R500 = { description: "Internal Server Error", content: json(ERROR) };
const R2XX = { description: "Success (no response schema declared)" };
const error = (description: string) => ({ description, content: json(ERROR) });

type Route = [method: string, path: string, definition: EndpointDefinition];

function documentOf(routes: Route[], extra: object = {}): OpenApiDocument {
  return openApiDocument(
    routes.map(([method, path, definition]) => ({ method, path, definition })),
    { info, ...extra },
  );
}

function operationOf(definition: EndpointDefinition, method = "GET", path = "/x") {
  const doc = documentOf([[method, path, definition]]);
  const template = path.replace(/[:*](\w+)/g, "{$1}");
  return { doc, op: doc.paths[template][method.toLowerCase()] as OpenApiOperation };
}

const handler = (): void => {};

Deno.test("openApiDocument() documents a bare endpoint with 400, 500 and 2XX", () => {
  const { doc, op } = operationOf(endpoint(() => "ok"), "GET", "/health");
  assert.deepEqual(op, {
    operationId: "getHealth",
    tags: ["health"],
    responses: { "400": R400, "500": R500, "2XX": R2XX },
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
      schema: { type: "string", format: "uuid" },
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
      schema: { type: "array", items: { type: "string", pattern: "^[a-z]+$" } },
    },
    {
      name: "since",
      in: "query",
      required: false,
      schema: { type: "string", format: "date-time" },
    },
    { name: "home", in: "query", required: false, schema: { type: "string", format: "uri" } },
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
      email: { type: "string", format: "email" },
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

Deno.test("openApiDocument() documents both forms of .returns()", () => {
  const User = schema("User", { id: Int });
  assert.deepEqual(operationOf(endpoint().returns(User).handle(handler)).op.responses["200"], {
    description: "OK",
    content: json({ $ref: "#/components/schemas/User" }),
  });
  const created = operationOf(endpoint().returns(201, "Created it", User).handle(handler)).op;
  assert.deepEqual(Object.keys(created.responses), ["201", "400", "500"]);
  assert.equal(created.responses["201"].description, "Created it");
  const gone = operationOf(endpoint().returns(204).handle(handler), "DELETE").op;
  assert.deepEqual(gone.responses["204"], { description: "No Content" });
  const text = operationOf(endpoint().returns(String).handle(handler)).op;
  assert.deepEqual(text.responses["200"].content, { "text/plain": { schema: { type: "string" } } });
});

Deno.test("openApiDocument() adds .response() entries; error statuses default to the envelope", () => {
  const def = endpoint()
    .returns({ id: Int })
    .response(202, "Queued", { ticket: Uuid })
    .response(410, "Gone for good")
    .handle(handler);
  const { op } = operationOf(def);
  assert.deepEqual(Object.keys(op.responses), ["200", "202", "400", "410", "500"]);
  assert.deepEqual(op.responses["202"], {
    description: "Queued",
    content: json({
      type: "object",
      properties: { ticket: { type: "string", format: "uuid" } },
      required: ["ticket"],
    }),
  });
  assert.deepEqual(op.responses["410"], error("Gone for good"));
});

Deno.test("openApiDocument() maps .mayThrow() codes to their status with the envelope", () => {
  const def = endpoint()
    .mayThrow("NotFound", "Conflict", "AlreadyExists", "Validation", "ServiceUnavailable")
    .handle(handler);
  const { op } = operationOf(def);
  assert.deepEqual(op.responses, {
    "400": R400,
    "404": error("Not Found"),
    "409": error("Conflict"),
    "500": R500,
    "503": error("Service Unavailable"),
    "2XX": R2XX,
  });
  const bad = operationOf(endpoint().mayThrow("BadRequest").handle(handler)).op;
  assert.deepEqual(bad.responses["400"], {
    description: "Bad Request: validation failed, or the request was rejected",
    content: json({ oneOf: [VALIDATION, ERROR] }),
  });
});

Deno.test("openApiDocument() lets .throws() and api().throws() replace entries of their status", () => {
  const Problem = schema("Problem", { title: String, detail: String });
  const def = endpoint()
    .mayThrow("NotFound")
    .throws(404, "No such order", Problem)
    .throws(400, "Bad order")
    .throws(503, "Route-level outage")
    .handle(handler);
  const globalThrows = [
    { status: 503, description: "Maintenance" },
    { status: 429, description: "Slow down", schema: Problem.node },
  ];
  const doc = documentOf([["GET", "/orders", def]], { globalThrows });
  const op = doc.paths["/orders"].get;
  assert.deepEqual(op.responses, {
    "400": error("Bad order"),
    "404": {
      description: "No such order",
      content: json({ $ref: "#/components/schemas/Problem" }),
    },
    "429": { description: "Slow down", content: json({ $ref: "#/components/schemas/Problem" }) },
    "500": R500,
    "503": error("Route-level outage"),
    "2XX": R2XX,
  });
  const other = documentOf([["GET", "/a", endpoint(handler)]], { globalThrows });
  assert.deepEqual(other.paths["/a"].get.responses["503"], error("Maintenance"));
});

Deno.test("openApiDocument() documents .secure() as bearer JWT with scopes and roles", () => {
  const doc = documentOf([
    ["GET", "/me", endpoint().description("Who am I").secure().handle(handler)],
    [
      "GET",
      "/admin",
      endpoint().secure({ scopes: ["admin:read"], roles: ["ops", "root"] }).handle(handler),
    ],
    ["GET", "/guarded", endpoint().secure((user) => user.sub === "ada").handle(handler)],
  ]);
  const me = doc.paths["/me"].get;
  assert.equal(me.description, "Who am I\n\nRequires a bearer token (JWT).");
  assert.deepEqual(me.security, [{ bearerAuth: [] }]);
  assert.deepEqual(me.responses["401"], {
    description: "Unauthorized: the bearer token is missing, expired or invalid",
    headers: {
      "WWW-Authenticate": { description: "The `Bearer` challenge", schema: { type: "string" } },
    },
    content: json(ERROR),
  });
  assert.equal(me.responses["403"], undefined);
  const admin = doc.paths["/admin"].get;
  assert.equal(
    admin.description,
    "Requires a bearer token (JWT). Required scopes: `admin:read`. Required roles: `ops`, `root`.",
  );
  assert.deepEqual(admin.responses["403"], error("Forbidden: a required scope or role is missing"));
  const guarded = doc.paths["/guarded"].get;
  assert.equal(
    guarded.description,
    "Requires a bearer token (JWT). Access is also decided by a guard.",
  );
  assert.ok(guarded.responses["403"]);
  assert.deepEqual(doc.components.securitySchemes, {
    bearerAuth: {
      type: "http",
      scheme: "bearer",
      bearerFormat: "JWT",
      description: "A JWT access token: `Authorization: Bearer <token>`",
    },
  });
});

Deno.test("openApiDocument() documents .rateLimit() as 429 with its headers", () => {
  const def = endpoint().description("Search").rateLimit({ max: 10, windowMs: 60_000 }).handle(
    handler,
  );
  const { op } = operationOf(def);
  assert.equal(op.description, "Search\n\nRate limited: at most 10 requests per 60 s per client.");
  assert.deepEqual(Object.keys(op.responses["429"].headers ?? {}), [
    "Retry-After",
    "RateLimit-Limit",
    "RateLimit-Remaining",
    "RateLimit-Reset",
  ]);
  assert.deepEqual(op.responses["429"].content, json(ERROR));
  const ms = operationOf(endpoint().rateLimit({ max: 1, windowMs: 1500 }).handle(handler)).op;
  assert.match(ms.description ?? "", /at most 1 requests per 1500 ms/);
});

Deno.test("openApiDocument() ignores .cors() and .inject(), which do not change the contract", () => {
  const Clock = provider({ name: "Clock", factory: () => Date.now });
  const plain = operationOf(endpoint().returns({ a: Int }).handle(handler)).doc;
  const more = operationOf(
    endpoint().cors({ origin: "https://a.example" }).inject({ clock: Clock }).returns({ a: Int })
      .handle(handler),
  ).doc;
  assert.deepEqual(more, plain);
});

Deno.test("openApiDocument() documents stream endpoints as text/event-stream and x-fw-stream", () => {
  const Quote = schema("Quote", { symbol: String, price: Number });
  const doc = documentOf([
    [
      "GET",
      "/feed",
      endpoint().query({ symbol: Optional(String) }).returns(Stream(Quote)).handle(handler),
    ],
    [
      "GET",
      "/chat/:room",
      endpoint().body(Stream({ text: String })).returns(Stream(Quote)).handle(handler),
    ],
    ["GET", "/upload", endpoint().body(Stream({ n: Int })).returns({ total: Int }).handle(handler)],
    [
      "GET",
      "/watch",
      endpoint().body({ ids: ArrayOf(Int) }).returns(Stream(Quote)).handle(handler),
    ],
  ]);
  const feed = doc.paths["/feed"].get;
  assert.deepEqual(feed.responses, {
    "101": {
      description: "Switching Protocols: with `Upgrade: websocket`, messages flow over a " +
        "WebSocket as JSON text frames (schemas in x-fw-stream)",
    },
    "200": {
      description: "Server-Sent Events: each event's `data` is one JSON message " +
        "(schema in x-fw-stream.message)",
      content: { "text/event-stream": { schema: { type: "string" } } },
    },
    "400": {
      description: "Bad Request: validation failed, or the request was rejected",
      content: json({ oneOf: [VALIDATION, ERROR] }),
    },
    "500": R500,
  });
  assert.deepEqual(feed["x-fw-stream"], {
    mode: "server-stream",
    transports: ["sse", "websocket"],
    message: { $ref: "#/components/schemas/Quote" },
  });
  assert.equal(feed.parameters?.[0].name, "symbol");
  const chat = doc.paths["/chat/{room}"].get;
  assert.deepEqual(Object.keys(chat.responses), ["101", "400", "500"]);
  assert.equal(chat.requestBody, undefined);
  assert.deepEqual(chat["x-fw-stream"], {
    mode: "bidi",
    transports: ["websocket"],
    message: { $ref: "#/components/schemas/Quote" },
    clientMessage: {
      type: "object",
      properties: { text: { type: "string" } },
      required: ["text"],
    },
  });
  assert.deepEqual(doc.paths["/upload"].get["x-fw-stream"], {
    mode: "client-stream",
    transports: ["websocket"],
    message: { type: "object", properties: { total: { type: "integer" } }, required: ["total"] },
    clientMessage: { type: "object", properties: { n: { type: "integer" } }, required: ["n"] },
  });
  const watch = doc.paths["/watch"].get;
  assert.equal(watch.requestBody, undefined);
  assert.deepEqual(watch["x-fw-stream"]?.body, {
    type: "object",
    properties: { ids: { type: "array", items: { type: "integer" } } },
    required: ["ids"],
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
