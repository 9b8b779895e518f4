/**
 * The 5xx members of the `HttpException` family. Throw them deliberately: their message reaches
 * the client. Any value that is not an `HttpException` becomes a generic 500 instead.
 *
 * @module
 */

import { HttpException, type HttpExceptionOptions } from "./exceptions.ts";

/**
 * 500 Internal Server Error: a deliberate 500 whose message reaches the client (any other thrown value becomes a generic 500 whose message does not).
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { InternalServerErrorException } from "@fw/runtime";
 * assert.equal(new InternalServerErrorException("Ledger closed").toBody().message, "Ledger closed");
 * ```
 */
export class InternalServerErrorException extends HttpException {
  /**
   * Creates a 500 exception.
   *
   * @param message Client-facing message; `"Internal Server Error"` when omitted.
   * @param options Cause, extra headers and error code.
   */
  constructor(message?: string, options?: HttpExceptionOptions) {
    super(500, message, options);
  }
}

/**
 * 501 Not Implemented: the operation is not implemented.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { NotImplementedException } from "@fw/runtime";
 * assert.equal(new NotImplementedException().status, 501);
 * ```
 */
export class NotImplementedException extends HttpException {
  /**
   * Creates a 501 exception.
   *
   * @param message Client-facing message; `"Not Implemented"` when omitted.
   * @param options Cause, extra headers and error code.
   */
  constructor(message?: string, options?: HttpExceptionOptions) {
    super(501, message, options);
  }
}

/**
 * 502 Bad Gateway: an upstream service answered badly.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { BadGatewayException } from "@fw/runtime";
 * assert.equal(new BadGatewayException("Payment provider failed").status, 502);
 * ```
 */
export class BadGatewayException extends HttpException {
  /**
   * Creates a 502 exception.
   *
   * @param message Client-facing message; `"Bad Gateway"` when omitted.
   * @param options Cause, extra headers and error code.
   */
  constructor(message?: string, options?: HttpExceptionOptions) {
    super(502, message, options);
  }
}

/**
 * 503 Service Unavailable: the service cannot answer now (overload, maintenance); `Retry-After` may be given through `options.headers`.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { ServiceUnavailableException } from "@fw/runtime";
 * assert.equal(new ServiceUnavailableException().message, "Service Unavailable");
 * ```
 */
export class ServiceUnavailableException extends HttpException {
  /**
   * Creates a 503 exception.
   *
   * @param message Client-facing message; `"Service Unavailable"` when omitted.
   * @param options Cause, extra headers and error code.
   */
  constructor(message?: string, options?: HttpExceptionOptions) {
    super(503, message, options);
  }
}

/**
 * 504 Gateway Timeout: an upstream service did not answer in time.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { GatewayTimeoutException } from "@fw/runtime";
 * assert.equal(new GatewayTimeoutException().status, 504);
 * ```
 */
export class GatewayTimeoutException extends HttpException {
  /**
   * Creates a 504 exception.
   *
   * @param message Client-facing message; `"Gateway Timeout"` when omitted.
   * @param options Cause, extra headers and error code.
   */
  constructor(message?: string, options?: HttpExceptionOptions) {
    super(504, message, options);
  }
}
