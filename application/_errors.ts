/**
 * Error responses shared by the dispatcher and the endpoint compiler.
 *
 * @module
 */

import { type Logger, statusText, toErrorResponse } from "@fw/runtime";

/**
 * The content type of every JSON response fw builds. Exactly this value (no `charset`: RFC 8259
 * defines none) keeps a 200 response on `Deno.serve`'s fast path.
 */
export const JSON_TYPE = "application/json";

/** `{ "content-type": JSON_TYPE }`, shared so that responses need no headers object of their own. */
export const JSON_HEADERS: HeadersInit = Object.freeze({ "content-type": JSON_TYPE });

/**
 * A JSON error response in the `{statusCode, message, error}` shape.
 *
 * @param status HTTP status.
 * @param message Client-facing message.
 * @param headers Extra headers.
 * @returns The response.
 */
export function jsonError(
  status: number,
  message: string,
  headers?: Record<string, string>,
): Response {
  return new Response(
    JSON.stringify({ statusCode: status, message, error: statusText(status) }),
    { status, headers: { "content-type": JSON_TYPE, ...headers } },
  );
}

/**
 * Maps any thrown value to a response; unexpected errors are logged with their stack and become
 * a generic 500.
 *
 * @param err The thrown value.
 * @param logger Where internal errors are logged.
 * @param req The request being handled (named in the log line).
 * @returns The response.
 */
export function errorResponse(err: unknown, logger: Logger, req?: Request): Response {
  const parts = toErrorResponse(err);
  if (parts.internal) {
    logger.error(`Unhandled error${req ? ` in ${req.method} ${new URL(req.url).pathname}` : ""}`, {
      error: err instanceof Error ? err : new Error(String(err)),
    });
  }
  const headers = new Headers(parts.headers);
  headers.set("content-type", JSON_TYPE);
  return new Response(JSON.stringify(parts.body), { status: parts.status, headers });
}

/**
 * Handlers known to never throw or reject (compiled endpoints map every error themselves), so the
 * dispatcher can skip its own error wrapper.
 */
export const safeHandlers: WeakSet<object> = new WeakSet();

/**
 * Handlers the dispatcher runs in a synchronous context instead of an async-context frame:
 * compiled unary endpoints without awaiting policies, which open a frame themselves around the
 * code that may await (see `compile_endpoint.ts`) and drop the request from the context once
 * their response is ready.
 */
export const syncHandlers: WeakSet<object> = new WeakSet();
