import assert from "node:assert/strict";
import { ArrayOf, endpoint, Int, Optional, schema, Stream, Uuid } from "../mod.ts";
import {
  documentOf,
  ERROR,
  error,
  handler,
  json,
  negotiated,
  NEGOTIATION_NOTE,
  operationOf,
  R2XX,
  R400,
  R406,
  R500,
  VALIDATION,
} from "../testdata/openapi_helpers.ts";
import { provider } from "@fw/runtime";
import { toJsonSchema } from "@fw/runtime/json-schema";

Deno.test("openApiDocument() documents both forms of .returns()", () => {
  const User = schema("User", { id: Int });
  assert.deepEqual(operationOf(endpoint().returns(User).handle(handler)).op.responses["200"], {
    description: "OK" + NEGOTIATION_NOTE,
    content: negotiated({ $ref: "#/components/schemas/User" }),
  });
  const created = operationOf(endpoint().returns(201, "Created it", User).handle(handler)).op;
  assert.deepEqual(Object.keys(created.responses), ["201", "400", "406", "500"]);
  assert.equal(created.responses["201"].description, "Created it" + NEGOTIATION_NOTE);
  const gone = operationOf(endpoint().returns(204).handle(handler), "DELETE").op;
  assert.deepEqual(gone.responses["204"], { description: "No Content" });
  const text = operationOf(endpoint().returns(String).handle(handler)).op;
  assert.deepEqual(text.responses["200"].content, { "text/plain": { schema: { type: "string" } } });
  assert.equal(text.responses["406"], undefined);
});

Deno.test("openApiDocument() adds .response() entries; error statuses default to the envelope", () => {
  const def = endpoint()
    .returns({ id: Int })
    .response(202, "Queued", { ticket: Uuid })
    .response(410, "Gone for good")
    .handle(handler);
  const { op } = operationOf(def);
  assert.deepEqual(Object.keys(op.responses), ["200", "202", "400", "406", "410", "500"]);
  assert.deepEqual(op.responses["202"], {
    description: "Queued",
    content: json({
      type: "object",
      properties: { ticket: toJsonSchema(Uuid) },
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
    "406": R406,
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
    "406": R406,
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
      "WWW-Authenticate": {
        description: "The `Bearer` challenge",
        required: true,
        schema: { type: "string" },
      },
    },
    content: json(ERROR),
  });
  assert.equal(me.responses["403"], undefined);
  assert.deepEqual(
    me.responses["503"],
    error("Service Unavailable: the keys to verify the token cannot be fetched (`jwksUrl`)"),
  );
  const admin = doc.paths["/admin"].get;
  assert.equal(
    admin.description,
    "Requires a bearer token (JWT). Required scopes: `admin:read`. Required roles: `ops`, `root`.",
  );
  assert.deepEqual(admin.responses["403"].headers, {
    "WWW-Authenticate": {
      description: 'With a missing scope: `Bearer error="insufficient_scope"`',
      required: false,
      schema: { type: "string" },
    },
  });
  const scoped = operationOf(endpoint().secure({ scopes: ["a"] }).handle(handler)).op;
  assert.equal(scoped.responses["403"].headers?.["WWW-Authenticate"].required, true);
  const guarded = doc.paths["/guarded"].get;
  assert.equal(
    guarded.description,
    "Requires a bearer token (JWT). Access is also decided by a guard.",
  );
  assert.deepEqual(
    guarded.responses["403"],
    error("Forbidden: a required scope or role is missing"),
  );
  assert.deepEqual(doc.components.securitySchemes, {
    bearerAuth: {
      type: "http",
      scheme: "bearer",
      bearerFormat: "JWT",
      description: "A JWT access token: `Authorization: Bearer <token>`",
    },
  });
});

Deno.test("openApiDocument() documents .rateLimit() as 429 with Retry-After, and RateLimit-* on every response", () => {
  const def = endpoint().description("Search").rateLimit({ max: 10, windowMs: 60_000 }).handle(
    handler,
  );
  const { op } = operationOf(def);
  assert.equal(op.description, "Search\n\nRate limited: at most 10 requests per 60 s per client.");
  const rate = ["RateLimit-Limit", "RateLimit-Remaining", "RateLimit-Reset"];
  assert.deepEqual(Object.keys(op.responses["429"].headers ?? {}), [...rate, "Retry-After"]);
  for (const status of ["2XX", "400", "406", "500"]) {
    assert.deepEqual(Object.keys(op.responses[status].headers ?? {}), rate, status);
  }
  assert.deepEqual(op.responses["429"].headers?.["Retry-After"], {
    description: "Seconds until the window resets",
    required: true,
    schema: { type: "integer", minimum: 0 },
  });
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
