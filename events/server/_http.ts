/**
 * HTTP answers of the Event Server: the error body of `fw.events.v1` with its status and
 * outcome, and JSON responses. Internal.
 *
 * @module
 */

import { HTTP_ERRORS, type HttpErrorBody, type HttpErrorCode } from "../protocol/frames.ts";

/** Extra fields of an error body. */
export interface ErrorExtras {
  /** The message id, when the request named one. */
  readonly id?: string;
  /** Field errors. */
  readonly errors?: readonly { readonly field: string; readonly message: string }[];
  /** Suggested wait before a retry. */
  readonly retryAfterMs?: number;
}

/**
 * A JSON response.
 *
 * @param status The status.
 * @param body The body.
 * @param headers Extra headers.
 * @returns The response.
 */
export function json(status: number, body: unknown, headers?: Record<string, string>): Response {
  return new Response(JSON.stringify(body), {
    status,
    headers: { "content-type": "application/json; charset=utf-8", ...headers },
  });
}

/**
 * The error response of a code: its status, outcome and body; `WWW-Authenticate: Bearer` on 401,
 * `Retry-After` when a wait is suggested.
 *
 * @param code The error code.
 * @param message The human-readable detail.
 * @param extras Message id, field errors, retry delay.
 * @returns The response.
 */
export function httpError(
  code: HttpErrorCode,
  message: string,
  extras: ErrorExtras = {},
): Response {
  const { status, outcome } = HTTP_ERRORS[code];
  const body: HttpErrorBody = { outcome, code, message, ...extras };
  const headers: Record<string, string> = {};
  if (status === 401) headers["www-authenticate"] = "Bearer";
  if (extras.retryAfterMs !== undefined) {
    headers["retry-after"] = String(Math.max(1, Math.ceil(extras.retryAfterMs / 1000)));
  }
  return json(status, body, headers);
}

/** Cross-origin settings: the allowed origins, or `*`. */
export type CorsOrigins = "*" | ReadonlySet<string>;

/**
 * Adds `Access-Control-Allow-Origin` (and `Vary: Origin`) to a response when the request comes
 * from an allowed origin.
 *
 * @param res The response.
 * @param req The request.
 * @param origins The allowed origins (none: unchanged).
 * @returns The response.
 */
export function withCors(res: Response, req: Request, origins: CorsOrigins | undefined): Response {
  const origin = req.headers.get("origin");
  if (origins === undefined || origin === null) return res;
  if (origins !== "*" && !origins.has(origin)) return res;
  try {
    res.headers.set("access-control-allow-origin", origins === "*" ? "*" : origin);
    if (origins !== "*") res.headers.append("vary", "Origin");
  } catch {
    // immutable headers (a WebSocket upgrade): nothing to add
  }
  return res;
}

/**
 * The answer to a CORS preflight of the publish endpoint.
 *
 * @param req The `OPTIONS` request.
 * @param origins The allowed origins.
 * @returns 204 with the CORS headers, or 204 with only `Allow` for a disallowed origin.
 */
export function preflight(req: Request, origins: CorsOrigins | undefined): Response {
  const res = new Response(null, { status: 204, headers: { allow: "OPTIONS, POST" } });
  const allowed = withCors(res, req, origins);
  if (allowed.headers.has("access-control-allow-origin")) {
    allowed.headers.set("access-control-allow-methods", "POST");
    allowed.headers.set(
      "access-control-allow-headers",
      "authorization, content-type, traceparent, tracestate",
    );
    allowed.headers.set("access-control-max-age", "600");
  }
  return allowed;
}
