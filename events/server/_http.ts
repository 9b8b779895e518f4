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
