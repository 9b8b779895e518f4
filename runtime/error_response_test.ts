import assert from "node:assert/strict";
import { ConflictException, NotFoundException, ValidationException } from "./client_exceptions.ts";
import { HttpException } from "./exceptions.ts";
import { errorCodeOf, toErrorResponse } from "./error_response.ts";

const INTERNAL = {
  statusCode: 500,
  message: "Internal Server Error",
  error: "Internal Server Error",
};

class DatabaseError extends Error {
  constructor() {
    super("password=hunter2 host=db.internal");
  }
}

const nonHttp: [string, unknown][] = [
  ["an Error", new Error("secret dsn")],
  ["an Error subclass", new DatabaseError()],
  ["a TypeError", new TypeError("Cannot read properties of undefined")],
  ["a string", "a string with a token abc123"],
  ["a plain object", { status: 404, message: "looks like an HTTP error" }],
  ["an object with toBody()", { status: 404, toBody: () => ({ leaked: true }) }],
  ["undefined", undefined],
  ["null", null],
  ["a number", 42],
];

for (const [what, thrown] of nonHttp) {
  Deno.test(`toErrorResponse() turns ${what} into a generic 500 that leaks nothing`, () => {
    const r = toErrorResponse(thrown);
    assert.equal(r.status, 500);
    assert.equal(r.internal, true);
    assert.equal(r.headers, undefined);
    assert.deepEqual(r.body, INTERNAL);
    assert.equal(errorCodeOf(thrown), "Internal");
  });
}

Deno.test("toErrorResponse() returns a fresh body each time", () => {
  const a = toErrorResponse(new Error("x"));
  (a.body as { message: string }).message = "changed";
  assert.deepEqual(toErrorResponse(new Error("y")).body, INTERNAL);
});

Deno.test("toErrorResponse() keeps an HttpException's status, message and headers", () => {
  const r = toErrorResponse(
    new HttpException(429, "Slow down", { headers: { "Retry-After": "7" } }),
  );
  assert.equal(r.status, 429);
  assert.equal(r.internal, false);
  assert.deepEqual(r.body, { statusCode: 429, message: "Slow down", error: "Too Many Requests" });
  assert.equal(r.headers?.get("retry-after"), "7");
});

Deno.test("toErrorResponse() gives a ValidationException the spec 7.1 body", () => {
  const errors = [{ field: "query.limit", message: "query.limit must be >= 1" }];
  const r = toErrorResponse(new ValidationException(errors));
  assert.equal(r.status, 400);
  assert.deepEqual(r.body, { message: "query.limit must be >= 1", errors });
});

Deno.test("errorCodeOf() names the code of HttpExceptions", () => {
  assert.equal(errorCodeOf(new NotFoundException()), "NotFound");
  assert.equal(errorCodeOf(new ConflictException()), "Conflict");
  assert.equal(
    errorCodeOf(new ConflictException("dup", { code: "AlreadyExists" })),
    "AlreadyExists",
  );
  assert.equal(errorCodeOf(new ValidationException([])), "Validation");
  assert.equal(errorCodeOf(new HttpException(405)), undefined);
});
