import assert from "node:assert/strict";
import {
  BadGatewayException,
  BadRequestException,
  ConflictException,
  ForbiddenException,
  GatewayTimeoutException,
  GoneException,
  HttpException,
  InternalServerErrorException,
  MethodNotAllowedException,
  NotAcceptableException,
  NotFoundException,
  NotImplementedException,
  PayloadTooLargeException,
  PreconditionFailedException,
  RequestTimeoutException,
  ServiceUnavailableException,
  toErrorResponse,
  TooManyRequestsException,
  UnauthorizedException,
  UnprocessableEntityException,
  UnsupportedMediaTypeException,
  ValidationException,
} from "./exceptions.ts";
import { ERROR_CODES, isErrorCode, statusText } from "./error_codes.ts";

const table: [new (m?: string) => HttpException, number, string][] = [
  [BadRequestException, 400, "Bad Request"],
  [UnauthorizedException, 401, "Unauthorized"],
  [ForbiddenException, 403, "Forbidden"],
  [NotFoundException, 404, "Not Found"],
  [MethodNotAllowedException, 405, "Method Not Allowed"],
  [NotAcceptableException, 406, "Not Acceptable"],
  [RequestTimeoutException, 408, "Request Timeout"],
  [ConflictException, 409, "Conflict"],
  [GoneException, 410, "Gone"],
  [PreconditionFailedException, 412, "Precondition Failed"],
  [PayloadTooLargeException, 413, "Payload Too Large"],
  [UnsupportedMediaTypeException, 415, "Unsupported Media Type"],
  [UnprocessableEntityException, 422, "Unprocessable Entity"],
  [TooManyRequestsException, 429, "Too Many Requests"],
  [InternalServerErrorException, 500, "Internal Server Error"],
  [NotImplementedException, 501, "Not Implemented"],
  [BadGatewayException, 502, "Bad Gateway"],
  [ServiceUnavailableException, 503, "Service Unavailable"],
  [GatewayTimeoutException, 504, "Gateway Timeout"],
];

for (const [Cls, status, phrase] of table) {
  Deno.test(`${Cls.name} has status ${status} and the body {statusCode, message, error}`, () => {
    const e = new Cls("Something specific");
    assert.ok(e instanceof HttpException);
    assert.ok(e instanceof Error);
    assert.equal(e.name, Cls.name);
    assert.equal(e.status, status);
    assert.deepEqual(e.toBody(), {
      statusCode: status,
      message: "Something specific",
      error: phrase,
    });
    assert.equal(new Cls().message, phrase);
  });
}

Deno.test("HttpException rejects a status outside 400..599", () => {
  assert.throws(() => new HttpException(200), RangeError);
  assert.throws(() => new HttpException(600), /400\.\.599, got 600/);
});

Deno.test("HttpException carries extra headers to toErrorResponse()", () => {
  const e = new UnauthorizedException("Token expired", {
    headers: { "WWW-Authenticate": "Bearer" },
  });
  const r = toErrorResponse(e);
  assert.equal(r.status, 401);
  assert.equal(r.headers?.get("www-authenticate"), "Bearer");
  assert.equal(r.internal, false);
});

Deno.test("ValidationException joins messages with '; ' and has the spec 7.1 body", () => {
  const errors = [
    { field: "params.id", message: "params.id must be a valid UUID" },
    { field: "body.email", message: "body.email must be a valid email address" },
  ];
  const e = new ValidationException(errors);
  assert.equal(e.status, 400);
  assert.ok(e instanceof BadRequestException);
  assert.deepEqual(e.toBody(), {
    message: "params.id must be a valid UUID; body.email must be a valid email address",
    errors,
  });
  assert.deepEqual(toErrorResponse(e).body, e.toBody());
});

Deno.test("toErrorResponse() maps any non-HttpException throw to a generic 500", () => {
  for (const thrown of [new Error("secret dsn"), "a string", { code: 1 }, undefined, null, 42]) {
    const r = toErrorResponse(thrown);
    assert.equal(r.status, 500);
    assert.equal(r.internal, true);
    assert.deepEqual(r.body, {
      statusCode: 500,
      message: "Internal Server Error",
      error: "Internal Server Error",
    });
  }
});

Deno.test("ERROR_CODES maps every .mayThrow() code of DECISIONS.md to its status", () => {
  assert.deepEqual(ERROR_CODES, {
    BadRequest: 400,
    Validation: 400,
    Unauthorized: 401,
    Forbidden: 403,
    NotFound: 404,
    Conflict: 409,
    AlreadyExists: 409,
    PreconditionFailed: 412,
    PayloadTooLarge: 413,
    UnsupportedMediaType: 415,
    UnprocessableEntity: 422,
    TooManyRequests: 429,
    Internal: 500,
    NotImplemented: 501,
    BadGateway: 502,
    ServiceUnavailable: 503,
    GatewayTimeout: 504,
  });
  assert.equal(isErrorCode("AlreadyExists"), true);
  assert.equal(isErrorCode("toString"), false);
});

Deno.test("statusText() gives phrases and a class fallback", () => {
  assert.equal(statusText(200), "OK");
  assert.equal(statusText(405), "Method Not Allowed");
  assert.equal(statusText(499), "Error");
});
