/**
 * Error responses shared by the dispatcher and the endpoint compiler.
 *
 * @module
 */

import { type Logger, statusText, toErrorResponse } from "@fw/runtime";

const JSON_TYPE = "application/json";

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
 * Handlers that complete synchronously (a plain-function endpoint with no body and no injection):
 * the dispatcher gives them a synchronous context instead of an async-context frame.
 */
export const syncHandlers: WeakSet<object> = new WeakSet();

/**
 * Handlers whose work ends with their response (compiled unary endpoints; not streams): once the
 * response is ready the dispatcher drops the request from the async context.
 */
export const unaryHandlers: WeakSet<object> = new WeakSet();

/**
 * Handlers that open an async scope themselves around the code that may await (compiled unary
 * endpoints without awaiting policies): the dispatcher gives them a synchronous scope.
 */
export const ownScopeHandlers: WeakSet<object> = new WeakSet();
