/**
 * The one catalogue of stable error codes and HTTP status phrases.
 *
 * @module
 */

/** Codes accepted by `.mayThrow()`; each maps to one HTTP status. */
export type ErrorCode =
  | "BadRequest"
  | "Validation"
  | "Unauthorized"
  | "Forbidden"
  | "NotFound"
  | "Conflict"
  | "AlreadyExists"
  | "PreconditionFailed"
  | "PayloadTooLarge"
  | "UnsupportedMediaType"
  | "UnprocessableEntity"
  | "TooManyRequests"
  | "Internal"
  | "NotImplemented"
  | "BadGateway"
  | "ServiceUnavailable"
  | "GatewayTimeout";

/**
 * The status of each error code, as types: what `.mayThrow()` tells the typed client.
 */
export interface ErrorStatuses {
  /** 400. */ BadRequest: 400;
  /** 400. */ Validation: 400;
  /** 401. */ Unauthorized: 401;
  /** 403. */ Forbidden: 403;
  /** 404. */ NotFound: 404;
  /** 409. */ Conflict: 409;
  /** 409. */ AlreadyExists: 409;
  /** 412. */ PreconditionFailed: 412;
  /** 413. */ PayloadTooLarge: 413;
  /** 415. */ UnsupportedMediaType: 415;
  /** 422. */ UnprocessableEntity: 422;
  /** 429. */ TooManyRequests: 429;
  /** 500. */ Internal: 500;
  /** 501. */ NotImplemented: 501;
  /** 502. */ BadGateway: 502;
  /** 503. */ ServiceUnavailable: 503;
  /** 504. */ GatewayTimeout: 504;
}

/**
 * Error code to HTTP status.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { ERROR_CODES } from "@fw/runtime";
 * assert.equal(ERROR_CODES.NotFound, 404);
 * ```
 */
export const ERROR_CODES: Readonly<ErrorStatuses> = Object.freeze({
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

/**
 * Tells whether a string is a known {@linkcode ErrorCode}.
 *
 * @param code The value to test.
 * @returns True for a code of the catalogue.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { isErrorCode } from "@fw/runtime";
 * assert.equal(isErrorCode("Conflict"), true);
 * assert.equal(isErrorCode("Teapot"), false);
 * ```
 */
export function isErrorCode(code: unknown): code is ErrorCode {
  return typeof code === "string" && Object.hasOwn(ERROR_CODES, code);
}

const CODE_BY_STATUS: ReadonlyMap<number, ErrorCode> = (() => {
  const map = new Map<number, ErrorCode>();
  for (const [code, status] of Object.entries(ERROR_CODES) as [ErrorCode, number][]) {
    if (!map.has(status)) map.set(status, code);
  }
  return map;
})();

/**
 * The primary error code of an HTTP status: the first catalogue code with that status
 * (`"Conflict"` for 409, `"BadRequest"` for 400), or `undefined` when the catalogue has none.
 *
 * @param status The HTTP status code.
 * @returns Its code, if any.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { errorCodeForStatus } from "@fw/runtime";
 * assert.equal(errorCodeForStatus(409), "Conflict");
 * assert.equal(errorCodeForStatus(405), undefined);
 * ```
 */
export function errorCodeForStatus(status: number): ErrorCode | undefined {
  return CODE_BY_STATUS.get(status);
}

const PHRASES: Readonly<Record<number, string>> = {
  100: "Continue",
  101: "Switching Protocols",
  200: "OK",
  201: "Created",
  202: "Accepted",
  204: "No Content",
  206: "Partial Content",
  301: "Moved Permanently",
  302: "Found",
  303: "See Other",
  304: "Not Modified",
  307: "Temporary Redirect",
  308: "Permanent Redirect",
  400: "Bad Request",
  401: "Unauthorized",
  402: "Payment Required",
  403: "Forbidden",
  404: "Not Found",
  405: "Method Not Allowed",
  406: "Not Acceptable",
  408: "Request Timeout",
  409: "Conflict",
  410: "Gone",
  411: "Length Required",
  412: "Precondition Failed",
  413: "Payload Too Large",
  414: "URI Too Long",
  415: "Unsupported Media Type",
  416: "Range Not Satisfiable",
  417: "Expectation Failed",
  418: "I'm a teapot",
  421: "Misdirected Request",
  422: "Unprocessable Entity",
  423: "Locked",
  424: "Failed Dependency",
  425: "Too Early",
  426: "Upgrade Required",
  428: "Precondition Required",
  429: "Too Many Requests",
  431: "Request Header Fields Too Large",
  451: "Unavailable For Legal Reasons",
  500: "Internal Server Error",
  501: "Not Implemented",
  502: "Bad Gateway",
  503: "Service Unavailable",
  504: "Gateway Timeout",
  505: "HTTP Version Not Supported",
  507: "Insufficient Storage",
  511: "Network Authentication Required",
};

/**
 * The reason phrase of an HTTP status (`"Not Found"` for 404); unknown statuses get the phrase of
 * their class (`"Error"` for 4xx/5xx, `"OK"` otherwise).
 *
 * @param status The HTTP status code.
 * @returns Its reason phrase.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { statusText } from "@fw/runtime";
 * assert.equal(statusText(404), "Not Found");
 * ```
 */
export function statusText(status: number): string {
  return PHRASES[status] ?? (status >= 400 ? "Error" : "OK");
}
