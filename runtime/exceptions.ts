/**
 * The `HttpException` family: throw one from a handler and the client gets its status with the
 * body `{statusCode, message, error}`; anything else thrown becomes a 500 whose details never
 * reach the client.
 *
 * @module
 */

import { statusText } from "./error_codes.ts";

/** The body of every error response except validation failures. */
export interface ErrorBody {
  /** The HTTP status. */
  statusCode: number;
  /** What went wrong, for the client. */
  message: string;
  /** The status phrase (`"Not Found"`). */
  error: string;
}

/** One failed check of a validation: the field (area prefixed) and its message. */
export interface ValidationIssue {
  /** The field path, prefixed by its area: `body.items[1].sku`, `query.limit`. */
  field: string;
  /** The full message, starting with the field: `body.email must be a valid email address`. */
  message: string;
}

/** The body of a 400 validation failure (spec 7.1). */
export interface ValidationErrorBody {
  /** Every issue's message joined with `"; "`. */
  message: string;
  /** One entry per failed check, in schema order. */
  errors: ValidationIssue[];
}

/** Options of {@linkcode HttpException} and its subclasses. */
export interface HttpExceptionOptions {
  /** The underlying error. */
  cause?: unknown;
  /** Headers added to the error response (for example `WWW-Authenticate`). */
  headers?: HeadersInit;
}

/**
 * An error that carries an HTTP status. Throw it (or a subclass) from a handler.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { HttpException } from "@fw/runtime";
 * const e = new HttpException(418, "No coffee here");
 * assert.deepEqual(e.toBody(), { statusCode: 418, message: "No coffee here", error: "I'm a teapot" });
 * ```
 */
export class HttpException extends Error {
  /** The HTTP status. */
  readonly status: number;
  /** Extra response headers, when given. */
  readonly headers?: Headers;

  /**
   * Creates an exception with a status.
   *
   * @param status An HTTP status between 400 and 599.
   * @param message The client-facing message; the status phrase when omitted.
   * @param options Cause and extra headers.
   * @throws {RangeError} When `status` is not an integer in 400..599.
   */
  constructor(status: number, message?: string, options: HttpExceptionOptions = {}) {
    if (!Number.isInteger(status) || status < 400 || status > 599) {
      throw new RangeError(`HttpException status must be an integer in 400..599, got ${status}`);
    }
    super(message ?? statusText(status), { cause: options.cause });
    this.name = new.target.name;
    this.status = status;
    if (options.headers) this.headers = new Headers(options.headers);
  }

  /** The response body: `{statusCode, message, error}`. */
  toBody(): ErrorBody | ValidationErrorBody {
    return { statusCode: this.status, message: this.message, error: statusText(this.status) };
  }
}

/** 400 Bad Request. */
export class BadRequestException extends HttpException {
  /**
   * Creates a 400 exception.
   *
   * @param message Client-facing message; the status phrase when omitted.
   * @param options Cause and extra headers.
   */
  constructor(message?: string, options?: HttpExceptionOptions) {
    super(400, message, options);
  }
}

/** 401 Unauthorized: no valid identity. */
export class UnauthorizedException extends HttpException {
  /**
   * Creates a 401 exception.
   *
   * @param message Client-facing message; the status phrase when omitted.
   * @param options Cause and extra headers.
   */
  constructor(message?: string, options?: HttpExceptionOptions) {
    super(401, message, options);
  }
}

/** 403 Forbidden: the identity is known but access is denied. */
export class ForbiddenException extends HttpException {
  /**
   * Creates a 403 exception.
   *
   * @param message Client-facing message; the status phrase when omitted.
   * @param options Cause and extra headers.
   */
  constructor(message?: string, options?: HttpExceptionOptions) {
    super(403, message, options);
  }
}

/** 404 Not Found. */
export class NotFoundException extends HttpException {
  /**
   * Creates a 404 exception.
   *
   * @param message Client-facing message; the status phrase when omitted.
   * @param options Cause and extra headers.
   */
  constructor(message?: string, options?: HttpExceptionOptions) {
    super(404, message, options);
  }
}

/** 405 Method Not Allowed. */
export class MethodNotAllowedException extends HttpException {
  /**
   * Creates a 405 exception.
   *
   * @param message Client-facing message; the status phrase when omitted.
   * @param options Cause and extra headers.
   */
  constructor(message?: string, options?: HttpExceptionOptions) {
    super(405, message, options);
  }
}

/** 406 Not Acceptable. */
export class NotAcceptableException extends HttpException {
  /**
   * Creates a 406 exception.
   *
   * @param message Client-facing message; the status phrase when omitted.
   * @param options Cause and extra headers.
   */
  constructor(message?: string, options?: HttpExceptionOptions) {
    super(406, message, options);
  }
}

/** 408 Request Timeout. */
export class RequestTimeoutException extends HttpException {
  /**
   * Creates a 408 exception.
   *
   * @param message Client-facing message; the status phrase when omitted.
   * @param options Cause and extra headers.
   */
  constructor(message?: string, options?: HttpExceptionOptions) {
    super(408, message, options);
  }
}

/** 409 Conflict. */
export class ConflictException extends HttpException {
  /**
   * Creates a 409 exception.
   *
   * @param message Client-facing message; the status phrase when omitted.
   * @param options Cause and extra headers.
   */
  constructor(message?: string, options?: HttpExceptionOptions) {
    super(409, message, options);
  }
}

/** 410 Gone. */
export class GoneException extends HttpException {
  /**
   * Creates a 410 exception.
   *
   * @param message Client-facing message; the status phrase when omitted.
   * @param options Cause and extra headers.
   */
  constructor(message?: string, options?: HttpExceptionOptions) {
    super(410, message, options);
  }
}

/** 412 Precondition Failed. */
export class PreconditionFailedException extends HttpException {
  /**
   * Creates a 412 exception.
   *
   * @param message Client-facing message; the status phrase when omitted.
   * @param options Cause and extra headers.
   */
  constructor(message?: string, options?: HttpExceptionOptions) {
    super(412, message, options);
  }
}

/** 413 Payload Too Large. */
export class PayloadTooLargeException extends HttpException {
  /**
   * Creates a 413 exception.
   *
   * @param message Client-facing message; the status phrase when omitted.
   * @param options Cause and extra headers.
   */
  constructor(message?: string, options?: HttpExceptionOptions) {
    super(413, message, options);
  }
}

/** 415 Unsupported Media Type. */
export class UnsupportedMediaTypeException extends HttpException {
  /**
   * Creates a 415 exception.
   *
   * @param message Client-facing message; the status phrase when omitted.
   * @param options Cause and extra headers.
   */
  constructor(message?: string, options?: HttpExceptionOptions) {
    super(415, message, options);
  }
}

/** 422 Unprocessable Entity. */
export class UnprocessableEntityException extends HttpException {
  /**
   * Creates a 422 exception.
   *
   * @param message Client-facing message; the status phrase when omitted.
   * @param options Cause and extra headers.
   */
  constructor(message?: string, options?: HttpExceptionOptions) {
    super(422, message, options);
  }
}

/** 429 Too Many Requests. */
export class TooManyRequestsException extends HttpException {
  /**
   * Creates a 429 exception.
   *
   * @param message Client-facing message; the status phrase when omitted.
   * @param options Cause and extra headers.
   */
  constructor(message?: string, options?: HttpExceptionOptions) {
    super(429, message, options);
  }
}

/** 500 Internal Server Error (its message reaches the client: throw it deliberately). */
export class InternalServerErrorException extends HttpException {
  /**
   * Creates a 500 exception.
   *
   * @param message Client-facing message; the status phrase when omitted.
   * @param options Cause and extra headers.
   */
  constructor(message?: string, options?: HttpExceptionOptions) {
    super(500, message, options);
  }
}

/** 501 Not Implemented. */
export class NotImplementedException extends HttpException {
  /**
   * Creates a 501 exception.
   *
   * @param message Client-facing message; the status phrase when omitted.
   * @param options Cause and extra headers.
   */
  constructor(message?: string, options?: HttpExceptionOptions) {
    super(501, message, options);
  }
}

/** 502 Bad Gateway. */
export class BadGatewayException extends HttpException {
  /**
   * Creates a 502 exception.
   *
   * @param message Client-facing message; the status phrase when omitted.
   * @param options Cause and extra headers.
   */
  constructor(message?: string, options?: HttpExceptionOptions) {
    super(502, message, options);
  }
}

/** 503 Service Unavailable. */
export class ServiceUnavailableException extends HttpException {
  /**
   * Creates a 503 exception.
   *
   * @param message Client-facing message; the status phrase when omitted.
   * @param options Cause and extra headers.
   */
  constructor(message?: string, options?: HttpExceptionOptions) {
    super(503, message, options);
  }
}

/** 504 Gateway Timeout. */
export class GatewayTimeoutException extends HttpException {
  /**
   * Creates a 504 exception.
   *
   * @param message Client-facing message; the status phrase when omitted.
   * @param options Cause and extra headers.
   */
  constructor(message?: string, options?: HttpExceptionOptions) {
    super(504, message, options);
  }
}

/** Constructor type shared by the exception classes above (message first). */
export type HttpExceptionClass = new (
  message?: string,
  options?: HttpExceptionOptions,
) => HttpException;

/**
 * A 400 carrying field-level validation issues; its body is `{message, errors}` (spec 7.1).
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
 * assert.equal(e.message, "body.name is required; body.age must be an integer");
 * ```
 */
export class ValidationException extends BadRequestException {
  /** The issues, in schema order. */
  readonly errors: ValidationIssue[];

  /**
   * Creates a validation failure.
   *
   * @param errors The validation issues (at least one).
   * @param options Cause and headers.
   */
  constructor(errors: ValidationIssue[], options?: HttpExceptionOptions) {
    super(errors.map((e) => e.message).join("; "), options);
    this.errors = errors;
  }

  /** The body `{message, errors}`. */
  override toBody(): ValidationErrorBody {
    return { message: this.message, errors: this.errors };
  }
}

/** What {@linkcode toErrorResponse} returns. */
export interface ErrorResponseParts {
  /** HTTP status. */
  status: number;
  /** JSON body. */
  body: ErrorBody | ValidationErrorBody;
  /** Extra headers from the exception, if any. */
  headers?: Headers;
  /** True when the thrown value was not an `HttpException` (log it; the client sees a generic 500). */
  internal: boolean;
}

const INTERNAL: ErrorBody = Object.freeze({
  statusCode: 500,
  message: "Internal Server Error",
  error: "Internal Server Error",
}) as ErrorBody;

/**
 * Turns any thrown value into status, body and headers. `HttpException`s keep their status and
 * message; everything else becomes a generic 500 with `internal: true`.
 *
 * @param err The thrown value.
 * @returns The response parts.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { NotFoundException, toErrorResponse } from "@fw/runtime";
 * assert.equal(toErrorResponse(new NotFoundException("No user 7")).status, 404);
 * assert.equal(toErrorResponse(new Error("db password in here")).body.message, "Internal Server Error");
 * ```
 */
export function toErrorResponse(err: unknown): ErrorResponseParts {
  if (err instanceof HttpException) {
    return { status: err.status, body: err.toBody(), headers: err.headers, internal: false };
  }
  return { status: 500, body: { ...INTERNAL }, internal: true };
}
