import assert from "node:assert/strict";
import {
  BadRequestException,
  ConflictException,
  ForbiddenException,
  GoneException,
  MethodNotAllowedException,
  NotAcceptableException,
  NotFoundException,
  PayloadTooLargeException,
  PreconditionFailedException,
  RequestTimeoutException,
  TooManyRequestsException,
  UnauthorizedException,
  UnprocessableEntityException,
  UnsupportedMediaTypeException,
  ValidationException,
} from "./client_exceptions.ts";
import {
  BadGatewayException,
  GatewayTimeoutException,
  InternalServerErrorException,
  NotImplementedException,
  ServiceUnavailableException,
} from "./server_exceptions.ts";
import { HttpException, type HttpExceptionClass } from "./exceptions.ts";
import { toErrorResponse } from "./error_response.ts";
import {
  ERROR_CODES,
  type ErrorCode,
  errorCodeForStatus,
  isErrorCode,
  statusText,
} from "./error_codes.ts";

const table: [HttpExceptionClass, number, string, ErrorCode | undefined][] = [
  [BadRequestException, 400, "Bad Request", "BadRequest"],
  [UnauthorizedException, 401, "Unauthorized", "Unauthorized"],
  [ForbiddenException, 403, "Forbidden", "Forbidden"],
  [NotFoundException, 404, "Not Found", "NotFound"],
  [MethodNotAllowedException, 405, "Method Not Allowed", undefined],
  [NotAcceptableException, 406, "Not Acceptable", undefined],
  [RequestTimeoutException, 408, "Request Timeout", undefined],
  [ConflictException, 409, "Conflict", "Conflict"],
  [GoneException, 410, "Gone", undefined],
  [PreconditionFailedException, 412, "Precondition Failed", "PreconditionFailed"],
  [PayloadTooLargeException, 413, "Payload Too Large", "PayloadTooLarge"],
  [UnsupportedMediaTypeException, 415, "Unsupported Media Type", "UnsupportedMediaType"],
  [UnprocessableEntityException, 422, "Unprocessable Entity", "UnprocessableEntity"],
  [TooManyRequestsException, 429, "Too Many Requests", "TooManyRequests"],
  [InternalServerErrorException, 500, "Internal Server Error", "Internal"],
  [NotImplementedException, 501, "Not Implemented", "NotImplemented"],
  [BadGatewayException, 502, "Bad Gateway", "BadGateway"],
  [ServiceUnavailableException, 503, "Service Unavailable", "ServiceUnavailable"],
  [GatewayTimeoutException, 504, "Gateway Timeout", "GatewayTimeout"],
];

for (const [Cls, status, phrase, code] of table) {
  Deno.test(`${Cls.name} has status ${status} and the body {statusCode, message, error}`, () => {
    const e = new Cls("Something specific");
    assert.ok(e instanceof HttpException);
    assert.ok(e instanceof Error);
    assert.equal(e.name, Cls.name);
    assert.equal(e.status, status);
    assert.equal(e.code, code);
    assert.deepEqual(e.toBody(), {
      statusCode: status,
      message: "Something specific",
      error: phrase,
    });
    assert.deepEqual(new Cls().toBody(), { statusCode: status, message: phrase, error: phrase });
    const r = toErrorResponse(e);
    assert.equal(r.status, status);
    assert.equal(r.internal, false);
    assert.equal(r.headers, undefined);
  });
}

Deno.test("HttpException keeps its cause and an explicit error code of the same status", () => {
  const cause = new Error("unique_violation");
  const e = new ConflictException("Email taken", { cause, code: "AlreadyExists" });
  assert.equal(e.cause, cause);
  assert.equal(e.code, "AlreadyExists");
  assert.throws(
    () => new ConflictException("x", { code: "NotFound" }),
    /HttpException code "NotFound" does not match status 409: "NotFound" means 404/,
  );
  assert.throws(
    // @ts-expect-error: unknown code on purpose
    () => new HttpException(400, "x", { code: "Nope" }),
    /code "Nope" does not match status 400: not a known error code/,
  );
  assert.equal(new HttpException(418).code, undefined);
});

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
  assert.equal(isErrorCode(404), false);
});

Deno.test("statusText() gives phrases and a class fallback", () => {
  assert.equal(statusText(200), "OK");
  assert.equal(statusText(405), "Method Not Allowed");
  assert.equal(statusText(499), "Error");
  assert.equal(statusText(599), "Error");
  assert.equal(statusText(299), "OK");
});

Deno.test("errorCodeForStatus() gives the first code of a status", () => {
  assert.equal(errorCodeForStatus(400), "BadRequest");
  assert.equal(errorCodeForStatus(409), "Conflict");
  assert.equal(errorCodeForStatus(504), "GatewayTimeout");
  assert.equal(errorCodeForStatus(418), undefined);
  for (const [code, status] of Object.entries(ERROR_CODES)) {
    assert.equal(ERROR_CODES[errorCodeForStatus(status)!], status, code);
  }
});
