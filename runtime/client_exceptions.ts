/**
 * The 4xx members of the `HttpException` family, and `ValidationException` (a 400 with the
 * field-level `{message, errors}` body).
 *
 * @module
 */

import {
  HttpException,
  type HttpExceptionOptions,
  type ValidationErrorBody,
  type ValidationIssue,
} from "./exceptions.ts";

/**
 * 400 Bad Request: the request is malformed or breaks a rule the schema cannot express.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { BadRequestException } from "@fw/runtime";
 * assert.deepEqual(new BadRequestException("Dates are reversed").toBody(), {
 *   statusCode: 400,
 *   message: "Dates are reversed",
 *   error: "Bad Request",
 * });
 * ```
 */
export class BadRequestException extends HttpException {
  /**
   * Creates a 400 exception.
   *
   * @param message Client-facing message; `"Bad Request"` when omitted.
   * @param options Cause, extra headers and error code.
   */
  constructor(message?: string, options?: HttpExceptionOptions) {
    super(400, message, options);
  }
}

/**
 * 401 Unauthorized: no valid identity: the token is missing, expired or invalid. Pass a `WWW-Authenticate` header through `options.headers`.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { UnauthorizedException } from "@fw/runtime";
 * const e = new UnauthorizedException("Token expired", { headers: { "WWW-Authenticate": "Bearer" } });
 * assert.equal(e.status, 401);
 * assert.equal(e.headers?.get("www-authenticate"), "Bearer");
 * ```
 */
export class UnauthorizedException extends HttpException {
  /**
   * Creates a 401 exception.
   *
   * @param message Client-facing message; `"Unauthorized"` when omitted.
   * @param options Cause, extra headers and error code.
   */
  constructor(message?: string, options?: HttpExceptionOptions) {
    super(401, message, options);
  }
}

/**
 * 403 Forbidden: the identity is known but access is denied (missing scope, role or failed guard).
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { ForbiddenException } from "@fw/runtime";
 * assert.equal(new ForbiddenException().message, "Forbidden");
 * ```
 */
export class ForbiddenException extends HttpException {
  /**
   * Creates a 403 exception.
   *
   * @param message Client-facing message; `"Forbidden"` when omitted.
   * @param options Cause, extra headers and error code.
   */
  constructor(message?: string, options?: HttpExceptionOptions) {
    super(403, message, options);
  }
}

/**
 * 404 Not Found: the resource does not exist.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { NotFoundException } from "@fw/runtime";
 * assert.equal(new NotFoundException("No user 7").status, 404);
 * ```
 */
export class NotFoundException extends HttpException {
  /**
   * Creates a 404 exception.
   *
   * @param message Client-facing message; `"Not Found"` when omitted.
   * @param options Cause, extra headers and error code.
   */
  constructor(message?: string, options?: HttpExceptionOptions) {
    super(404, message, options);
  }
}

/**
 * 405 Method Not Allowed: the path exists but not for this method; give the `Allow` header through `options.headers`.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { MethodNotAllowedException } from "@fw/runtime";
 * const e = new MethodNotAllowedException(undefined, { headers: { Allow: "GET, HEAD" } });
 * assert.equal(e.headers?.get("allow"), "GET, HEAD");
 * ```
 */
export class MethodNotAllowedException extends HttpException {
  /**
   * Creates a 405 exception.
   *
   * @param message Client-facing message; `"Method Not Allowed"` when omitted.
   * @param options Cause, extra headers and error code.
   */
  constructor(message?: string, options?: HttpExceptionOptions) {
    super(405, message, options);
  }
}

/**
 * 406 Not Acceptable: no representation matches the `Accept` header.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { NotAcceptableException } from "@fw/runtime";
 * assert.equal(new NotAcceptableException().status, 406);
 * ```
 */
export class NotAcceptableException extends HttpException {
  /**
   * Creates a 406 exception.
   *
   * @param message Client-facing message; `"Not Acceptable"` when omitted.
   * @param options Cause, extra headers and error code.
   */
  constructor(message?: string, options?: HttpExceptionOptions) {
    super(406, message, options);
  }
}

/**
 * 408 Request Timeout: the client took too long to send the request.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { RequestTimeoutException } from "@fw/runtime";
 * assert.equal(new RequestTimeoutException().message, "Request Timeout");
 * ```
 */
export class RequestTimeoutException extends HttpException {
  /**
   * Creates a 408 exception.
   *
   * @param message Client-facing message; `"Request Timeout"` when omitted.
   * @param options Cause, extra headers and error code.
   */
  constructor(message?: string, options?: HttpExceptionOptions) {
    super(408, message, options);
  }
}

/**
 * 409 Conflict: the request conflicts with the resource's current state. Pass `{ code: "AlreadyExists" }` for a duplicate.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { ConflictException } from "@fw/runtime";
 * const e = new ConflictException("Email taken", { code: "AlreadyExists" });
 * assert.equal(e.status, 409);
 * assert.equal(e.code, "AlreadyExists");
 * ```
 */
export class ConflictException extends HttpException {
  /**
   * Creates a 409 exception.
   *
   * @param message Client-facing message; `"Conflict"` when omitted.
   * @param options Cause, extra headers and error code.
   */
  constructor(message?: string, options?: HttpExceptionOptions) {
    super(409, message, options);
  }
}

/**
 * 410 Gone: the resource existed and was removed for good.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { GoneException } from "@fw/runtime";
 * assert.equal(new GoneException().status, 410);
 * ```
 */
export class GoneException extends HttpException {
  /**
   * Creates a 410 exception.
   *
   * @param message Client-facing message; `"Gone"` when omitted.
   * @param options Cause, extra headers and error code.
   */
  constructor(message?: string, options?: HttpExceptionOptions) {
    super(410, message, options);
  }
}

/**
 * 412 Precondition Failed: a conditional header (`If-Match`, `If-Unmodified-Since`) did not hold.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { PreconditionFailedException } from "@fw/runtime";
 * assert.equal(new PreconditionFailedException("ETag changed").status, 412);
 * ```
 */
export class PreconditionFailedException extends HttpException {
  /**
   * Creates a 412 exception.
   *
   * @param message Client-facing message; `"Precondition Failed"` when omitted.
   * @param options Cause, extra headers and error code.
   */
  constructor(message?: string, options?: HttpExceptionOptions) {
    super(412, message, options);
  }
}

/**
 * 413 Payload Too Large: the body is over the size limit.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { PayloadTooLargeException } from "@fw/runtime";
 * assert.equal(new PayloadTooLargeException().message, "Payload Too Large");
 * ```
 */
export class PayloadTooLargeException extends HttpException {
  /**
   * Creates a 413 exception.
   *
   * @param message Client-facing message; `"Payload Too Large"` when omitted.
   * @param options Cause, extra headers and error code.
   */
  constructor(message?: string, options?: HttpExceptionOptions) {
    super(413, message, options);
  }
}

/**
 * 415 Unsupported Media Type: the body's `Content-Type` is not accepted.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { UnsupportedMediaTypeException } from "@fw/runtime";
 * assert.equal(new UnsupportedMediaTypeException().status, 415);
 * ```
 */
export class UnsupportedMediaTypeException extends HttpException {
  /**
   * Creates a 415 exception.
   *
   * @param message Client-facing message; `"Unsupported Media Type"` when omitted.
   * @param options Cause, extra headers and error code.
   */
  constructor(message?: string, options?: HttpExceptionOptions) {
    super(415, message, options);
  }
}

/**
 * 422 Unprocessable Entity: the body is well formed but cannot be processed.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { UnprocessableEntityException } from "@fw/runtime";
 * assert.equal(new UnprocessableEntityException("Cart is empty").status, 422);
 * ```
 */
export class UnprocessableEntityException extends HttpException {
  /**
   * Creates a 422 exception.
   *
   * @param message Client-facing message; `"Unprocessable Entity"` when omitted.
   * @param options Cause, extra headers and error code.
   */
  constructor(message?: string, options?: HttpExceptionOptions) {
    super(422, message, options);
  }
}

/**
 * 429 Too Many Requests: a rate limit was exceeded; pass `Retry-After` through `options.headers`.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { TooManyRequestsException } from "@fw/runtime";
 * const e = new TooManyRequestsException(undefined, { headers: { "Retry-After": "30" } });
 * assert.equal(e.headers?.get("retry-after"), "30");
 * ```
 */
export class TooManyRequestsException extends HttpException {
  /**
   * Creates a 429 exception.
   *
   * @param message Client-facing message; `"Too Many Requests"` when omitted.
   * @param options Cause, extra headers and error code.
   */
  constructor(message?: string, options?: HttpExceptionOptions) {
    super(429, message, options);
  }
}

/**
 * A 400 carrying field-level validation issues; its body is `{message, errors}`, the
 * message being every issue's message joined with `"; "`. Its error code is `"Validation"`.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { ValidationException } from "@fw/runtime";
 * const e = new ValidationException([
 *   { field: "body.name", message: "body.name is required" },
 *   { field: "body.age", message: "body.age must be an integer" },
 * ]);
 * assert.equal(e.status, 400);
 * assert.equal(e.code, "Validation");
 * assert.equal(e.message, "body.name is required; body.age must be an integer");
 * assert.deepEqual(e.toBody().errors.map((i) => i.field), ["body.name", "body.age"]);
 * ```
 */
export class ValidationException extends BadRequestException {
  /** The issues, in schema order. */
  readonly errors: ValidationIssue[];

  /**
   * Creates a validation failure.
   *
   * @param errors The validation issues (at least one).
   * @param options Cause and headers (the code is always `"Validation"`).
   */
  constructor(errors: ValidationIssue[], options?: HttpExceptionOptions) {
    super(errors.map((e) => e.message).join("; "), { ...options, code: "Validation" });
    this.errors = errors;
  }

  /**
   * The body `{message, errors}`.
   *
   * @returns A fresh body object.
   */
  override toBody(): ValidationErrorBody {
    return { message: this.message, errors: this.errors };
  }
}
