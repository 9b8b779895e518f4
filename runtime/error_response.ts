/**
 * From a thrown value to the error response the client sees. `HttpException`s keep their status,
 * message and headers; any other value becomes a generic 500 that never leaks its message, and is
 * flagged `internal` so the caller logs it with its stack.
 *
 * @module
 */

import type { ErrorCode } from "./error_codes.ts";
import { type ErrorBody, HttpException, type ValidationErrorBody } from "./exceptions.ts";

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

/**
 * Turns any thrown value into status, body and headers. `HttpException`s keep their status and
 * message; everything else (an `Error`, a string, `undefined`...) becomes a generic 500 with
 * `internal: true` and the body `{statusCode: 500, message: "Internal Server Error", error:
 * "Internal Server Error"}`.
 *
 * @param err The thrown value.
 * @returns The response parts (a fresh body each call).
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { NotFoundException, toErrorResponse } from "@fw/runtime";
 * assert.equal(toErrorResponse(new NotFoundException("No user 7")).status, 404);
 * const hidden = toErrorResponse(new Error("db password in here"));
 * assert.equal(hidden.body.message, "Internal Server Error");
 * assert.equal(hidden.internal, true);
 * ```
 */
export function toErrorResponse(err: unknown): ErrorResponseParts {
  if (err instanceof HttpException) {
    return { status: err.status, body: err.toBody(), headers: err.headers, internal: false };
  }
  return {
    status: 500,
    body: { statusCode: 500, message: "Internal Server Error", error: "Internal Server Error" },
    internal: true,
  };
}

/**
 * The stable error code of the response a thrown value produces: an `HttpException`'s `code`,
 * `"Internal"` for anything that is not an `HttpException`, and `undefined` for exceptions whose
 * status has no code in the catalogue (405, 406, 408, 410, a custom 418). Handy for metrics
 * attributes, logs and matching `.mayThrow()` declarations.
 *
 * @param err The thrown value.
 * @returns Its error code, if any.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { ConflictException, errorCodeOf, ValidationException } from "@fw/runtime";
 * assert.equal(errorCodeOf(new ConflictException("Email taken", { code: "AlreadyExists" })), "AlreadyExists");
 * assert.equal(errorCodeOf(new ValidationException([{ field: "body", message: "body must be an object" }])), "Validation");
 * assert.equal(errorCodeOf(new TypeError("oops")), "Internal");
 * ```
 */
export function errorCodeOf(err: unknown): ErrorCode | undefined {
  return err instanceof HttpException ? err.code : "Internal";
}
