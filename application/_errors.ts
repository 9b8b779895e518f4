/**
 * Error responses: the one builder that compiled endpoints, stream endpoints, route policies and
 * the dispatcher use for thrown values, and `jsonError` for the responses fw refuses with itself.
 *
 * @module
 */

import {
  currentSpan,
  type ErrorResponseParts,
  joinMessages,
  type Logger,
  statusText,
  toErrorResponse,
  type ValidationIssue,
} from "@fw/runtime";

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
 * The 400 response for invalid input (params, query or body of an endpoint or a stream endpoint):
 * `{message, errors}`, the message joining every issue's message with "; ".
 *
 * @param errors The issues, with their field paths.
 * @returns The response.
 */
export function invalidInput(errors: readonly ValidationIssue[]): Response {
  noteInvalidInput(errors);
  const body = JSON.stringify({ message: joinMessages(errors), errors });
  return new Response(body, { status: 400, headers: JSON_HEADERS });
}

/**
 * Adds the `validation failed` event, naming the fields (never their values), to the request's
 * span when it is traced.
 *
 * @param errors The validation issues.
 */
function noteInvalidInput(errors: readonly ValidationIssue[]): void {
  const span = currentSpan();
  if (span === undefined || !span.recording) return;
  span.addEvent("validation failed", {
    "fw.validation.fields": errors.map((e) => e.field),
    "fw.validation.count": errors.length,
  });
}

/** The body of the last-resort 500, when even mapping the thrown value failed. */
const INTERNAL_ERROR_BODY =
  '{"statusCode":500,"message":"Internal Server Error","error":"Internal Server Error"}';

/**
 * Maps a thrown value to its status, body and headers, logging it when it is internal (not an
 * `HttpException`): `Unhandled error in <where>` with the error and its stack.
 *
 * The one place where a thrown value meets the logger: {@linkcode errorResponse} builds on it, and
 * a stream endpoint whose handler fails after the response has started sends the body as its
 * `{"error": ...}` message instead.
 *
 * @param error The thrown value.
 * @param logger Where internal errors are logged.
 * @param where What to name in the log line: a route label (`GET /users/:id`, known at compile
 *   time) or the request (its method and path are read only when an error is logged).
 * @returns The parts of the error response.
 */
export function reportError(
  error: unknown,
  logger: Logger,
  where: string | Request,
): ErrorResponseParts {
  const parts = toErrorResponse(error);
  if (parts.status === 400) {
    const issues = (parts.body as { errors?: readonly ValidationIssue[] }).errors;
    if (Array.isArray(issues)) noteInvalidInput(issues);
  }
  if (parts.status >= 500) currentSpan()?.recordException(error);
  if (parts.internal) {
    const label = typeof where === "string"
      ? where
      : `${where.method} ${new URL(where.url).pathname}`;
    logger.error(`Unhandled error in ${label}`, {
      error: error instanceof Error ? error : new Error(String(error)),
    });
  }
  return parts;
}

/**
 * The error response for any thrown value, built in one place for compiled endpoints, stream
 * endpoints (before the stream starts), route policies and the dispatcher: a JSON body in the
 * `{statusCode, message, error}` shape (`{message, errors}` for validation), the exception's own
 * headers (`Allow`, `Retry-After`, `WWW-Authenticate`) and the JSON content type. Unexpected
 * errors are logged (see {@linkcode reportError}) and answered with a generic 500; if even that
 * mapping fails, a fixed 500 body is sent.
 *
 * @param error The thrown value.
 * @param logger Where internal errors are logged.
 * @param where The route label or the request, named in the log line: the only difference
 *   between the callers.
 * @returns The response.
 */
export function errorResponse(error: unknown, logger: Logger, where: string | Request): Response {
  try {
    const { status, body, headers } = reportError(error, logger, where);
    if (headers === undefined) {
      return new Response(JSON.stringify(body), { status, headers: JSON_HEADERS });
    }
    const all = new Headers(headers);
    all.set("content-type", JSON_TYPE);
    return new Response(JSON.stringify(body), { status, headers: all });
  } catch {
    return new Response(INTERNAL_ERROR_BODY, { status: 500, headers: JSON_HEADERS });
  }
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
