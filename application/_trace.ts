/**
 * Trace ids: taken from a valid W3C `traceparent` header, otherwise freshly generated.
 *
 * @module
 */

import { requestHeader } from "./_request_header.ts";

const TRACEPARENT = /^[0-9a-f]{2}-([0-9a-f]{32})-[0-9a-f]{16}-[0-9a-f]{2}$/;
const ZERO = "0".repeat(32);

/** A random 32-hex-digit trace id. */
export function newTraceId(): string {
  const bytes = crypto.getRandomValues(new Uint8Array(16));
  let out = "";
  for (const b of bytes) out += (b < 16 ? "0" : "") + b.toString(16);
  return out;
}

const cache = new WeakMap<Request, string>();

/**
 * The trace id of a request (stable for the request's lifetime).
 *
 * @param req The request.
 * @returns 32 lower-case hex digits.
 */
export function traceIdOf(req: Request): string {
  let id = cache.get(req);
  if (id) return id;
  const m = TRACEPARENT.exec(requestHeader(req, "traceparent")?.trim().toLowerCase() ?? "");
  id = m && m[1] !== ZERO ? m[1] : newTraceId();
  cache.set(req, id);
  return id;
}

/**
 * The trace id of a request if one was already computed, without computing it.
 *
 * @param req The request.
 * @returns The trace id, or `undefined`.
 */
export function knownTraceId(req: Request): string | undefined {
  return cache.get(req);
}

/**
 * Fixes the trace id of a request (the trace of its server span, when tracing is on), so the
 * context's `traceId`, log lines and published messages name the same trace as the span.
 *
 * @param req The request.
 * @param id 32 lower-case hex digits.
 */
export function setTraceId(req: Request, id: string): void {
  cache.set(req, id);
}
