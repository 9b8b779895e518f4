/**
 * `HttpResponse` and its factories: a response a handler returns when it wants full
 * control of status, headers and body. It is sent as given: no content negotiation, no response
 * validation, and `ctx.statusCode` does not apply.
 *
 * @module
 */

import { JSON_TYPE } from "./_errors.ts";
import { statusText } from "@fw/runtime";

/** Options of the {@linkcode HttpResponse} constructor and of {@linkcode json}. */
export interface HttpResponseInit {
  /** Status code, 200 to 599. Default 200. */
  status?: number;
  /** Initial headers. */
  headers?: HeadersInit;
}

/** Status codes accepted by {@linkcode HttpResponse.redirect}. */
export type RedirectStatus = 301 | 302 | 303 | 307 | 308;

const NULL_BODY_STATUS = new Set([204, 205, 304]);
const REDIRECT_STATUS = new Set([301, 302, 303, 307, 308]);

function checkStatus(status: number, where: string): number {
  if (!Number.isInteger(status) || status < 200 || status > 599) {
    throw new RangeError(
      `Invalid status ${status} in ${where}: expected an integer from 200 to 599`,
    );
  }
  return status;
}

/**
 * A response sent exactly as built: status, headers and body as given.
 *
 * Return it from a handler (or use the factories {@linkcode json}, {@linkcode notFound},
 * {@linkcode unauthorized}, {@linkcode forbidden}, {@linkcode badRequest} and
 * {@linkcode HttpResponse.redirect}). Headers are set with the chainable
 * {@linkcode HttpResponse.setHeader}.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { HttpResponse } from "@fw/application";
 *
 * const res = new HttpResponse("created", { status: 201 }).setHeader("location", "/users/7");
 * const sent = res.toResponse();
 * assert.equal(sent.status, 201);
 * assert.equal(sent.headers.get("location"), "/users/7");
 * assert.equal(await sent.text(), "created");
 * ```
 */
export class HttpResponse {
  /** Status code. */
  readonly status: number;
  /** Response headers; change them with {@linkcode HttpResponse.setHeader}. */
  readonly headers: Headers;
  /** Response body, sent unchanged (`null` for none). */
  readonly body: BodyInit | null;

  /**
   * Builds a response.
   *
   * @param body The body, sent unchanged; `null` (default) for none.
   * @param init Status (default 200) and headers.
   * @throws {RangeError} When the status is not an integer from 200 to 599.
   * @throws {TypeError} When a body is given with status 204, 205 or 304.
   */
  constructor(body: BodyInit | null = null, init: HttpResponseInit = {}) {
    this.status = checkStatus(init.status ?? 200, "HttpResponse");
    if (body !== null && NULL_BODY_STATUS.has(this.status)) {
      throw new TypeError(`Invalid HttpResponse: status ${this.status} cannot have a body`);
    }
    this.headers = new Headers(init.headers);
    this.body = body;
  }

  /**
   * Sets a header, replacing any value it had.
   *
   * @param name Header name (case-insensitive).
   * @param value Header value.
   * @returns This response, for chaining.
   * @throws {TypeError} When the name or value is not a valid header (for example holds a newline).
   *
   * @example
   * ```ts
   * import assert from "node:assert/strict";
   * import { json } from "@fw/application";
   * const res = json({ ok: true }).setHeader("cache-control", "no-store").setHeader("x-id", "7");
   * assert.equal(res.headers.get("cache-control"), "no-store");
   * ```
   */
  setHeader(name: string, value: string): this {
    this.headers.set(name, value);
    return this;
  }

  /**
   * Converts to a standard `Response`. The body can be read once.
   *
   * @returns The `Response` to send.
   */
  toResponse(): Response {
    return new Response(this.body, { status: this.status, headers: this.headers });
  }

  /**
   * A redirect to `location` (relative locations are sent as given).
   *
   * @param location Target URL or path.
   * @param status 301, 302 (default), 303, 307 or 308.
   * @returns The redirect response, with a `Location` header and no body.
   * @throws {RangeError} When `status` is not a redirect status.
   *
   * @example
   * ```ts
   * import assert from "node:assert/strict";
   * import { HttpResponse } from "@fw/application";
   * const res = HttpResponse.redirect("/login", 303);
   * assert.equal(res.status, 303);
   * assert.equal(res.headers.get("location"), "/login");
   * ```
   */
  static redirect(location: string | URL, status: RedirectStatus = 302): HttpResponse {
    if (!REDIRECT_STATUS.has(status)) {
      throw new RangeError(
        `Invalid redirect status ${status}: expected 301, 302, 303, 307 or 308`,
      );
    }
    return new HttpResponse(null, { status, headers: { location: String(location) } });
  }
}

/**
 * A JSON response, whatever the request's `Accept` header says.
 *
 * @param data Any JSON-serialisable value.
 * @param init Status (default 200) and extra headers.
 * @returns The response with `content-type: application/json`.
 * @throws {RangeError} When the status is not an integer from 200 to 599.
 * @throws {TypeError} When `data` cannot be serialised (a `BigInt`, a cycle).
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { json } from "@fw/application";
 * const res = json({ id: 7 }, { status: 201 }).toResponse();
 * assert.equal(res.status, 201);
 * assert.deepEqual(await res.json(), { id: 7 });
 * ```
 */
export function json(data: unknown, init: HttpResponseInit = {}): HttpResponse {
  const res = new HttpResponse(JSON.stringify(data) ?? "null", init);
  if (!res.headers.has("content-type")) res.headers.set("content-type", JSON_TYPE);
  return res;
}

function errorResponse(status: number, message: string | undefined): HttpResponse {
  const error = statusText(status);
  return json({ statusCode: status, message: message ?? error, error }, { status });
}

/**
 * A 404 response in the error shape `{statusCode, message, error}`.
 *
 * @param message The message; default `"Not Found"`.
 * @returns The response.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { notFound } from "@fw/application";
 * const res = notFound('User "7" not found').toResponse();
 * assert.equal(res.status, 404);
 * assert.deepEqual(await res.json(), {
 *   statusCode: 404,
 *   message: 'User "7" not found',
 *   error: "Not Found",
 * });
 * ```
 */
export function notFound(message?: string): HttpResponse {
  return errorResponse(404, message);
}

/**
 * A 401 response in the error shape `{statusCode, message, error}`.
 *
 * @param message The message; default `"Unauthorized"`.
 * @returns The response (add `WWW-Authenticate` with {@linkcode HttpResponse.setHeader}).
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { unauthorized } from "@fw/application";
 * const res = unauthorized().setHeader("www-authenticate", "Bearer").toResponse();
 * assert.equal(res.status, 401);
 * assert.equal((await res.json()).message, "Unauthorized");
 * ```
 */
export function unauthorized(message?: string): HttpResponse {
  return errorResponse(401, message);
}

/**
 * A 403 response in the error shape `{statusCode, message, error}`.
 *
 * @param message The message; default `"Forbidden"`.
 * @returns The response.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { forbidden } from "@fw/application";
 * assert.equal(forbidden("Admins only").status, 403);
 * ```
 */
export function forbidden(message?: string): HttpResponse {
  return errorResponse(403, message);
}

/**
 * A 400 response in the error shape `{statusCode, message, error}`.
 *
 * @param message The message; default `"Bad Request"`.
 * @returns The response.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { badRequest } from "@fw/application";
 * const res = badRequest('Unknown sort key "size"').toResponse();
 * assert.equal(res.status, 400);
 * assert.equal((await res.json()).error, "Bad Request");
 * ```
 */
export function badRequest(message?: string): HttpResponse {
  return errorResponse(400, message);
}
