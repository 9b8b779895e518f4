/**
 * The base of the `HttpException` family and the shapes of error bodies: throw an exception from
 * a handler and the client gets its status with the body `{statusCode, message, error}`; anything
 * else thrown becomes a 500 whose details never reach the client (see `error_response.ts`). The
 * subclasses live in `client_exceptions.ts` (4xx) and `server_exceptions.ts` (5xx).
 *
 * @module
 */

import { ERROR_CODES, type ErrorCode, errorCodeForStatus, statusText } from "./error_codes.ts";

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

/** The body of a 400 validation failure. */
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
  /**
   * The stable error code (see `ERROR_CODES`), when the status has several (409: `"Conflict"` or
   * `"AlreadyExists"`); by default the status's first code.
   */
  code?: ErrorCode;
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
 * assert.equal(e.code, undefined); // no catalogue code for 418
 * assert.equal(new HttpException(404).code, "NotFound");
 * ```
 */
export class HttpException extends Error {
  /** The HTTP status. */
  readonly status: number;
  /** Extra response headers, when given. */
  readonly headers?: Headers;
  /** The stable error code: `options.code`, else the status's first code, else `undefined`. */
  readonly code?: ErrorCode;

  /**
   * Creates an exception with a status.
   *
   * @param status An HTTP status between 400 and 599.
   * @param message The client-facing message; the status phrase when omitted.
   * @param options Cause, extra headers and error code.
   * @throws {RangeError} When `status` is not an integer in 400..599, or `options.code` names
   *   another status.
   */
  constructor(status: number, message?: string, options: HttpExceptionOptions = {}) {
    if (!Number.isInteger(status) || status < 400 || status > 599) {
      throw new RangeError(`HttpException status must be an integer in 400..599, got ${status}`);
    }
    const code = options.code;
    if (code !== undefined && ERROR_CODES[code] !== status) {
      throw new RangeError(
        `HttpException code "${code}" does not match status ${status}: ` +
          (Object.hasOwn(ERROR_CODES, code)
            ? `"${code}" means ${ERROR_CODES[code]}`
            : "not a known error code"),
      );
    }
    super(message ?? statusText(status), { cause: options.cause });
    this.name = new.target.name;
    this.status = status;
    this.code = code ?? errorCodeForStatus(status);
    if (options.headers) this.headers = new Headers(options.headers);
  }

  /**
   * The response body: `{statusCode, message, error}`.
   *
   * @returns A fresh body object.
   */
  toBody(): ErrorBody | ValidationErrorBody {
    return { statusCode: this.status, message: this.message, error: statusText(this.status) };
  }
}

/** Constructor type shared by the status subclasses (message first). */
export type HttpExceptionClass = new (
  message?: string,
  options?: HttpExceptionOptions,
) => HttpException;
