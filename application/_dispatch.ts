/**
 * Helpers of the request dispatcher in `application.ts`: cutting the path out of a URL, the
 * request's async-context values, HEAD bodies and percent-decoding of path parameters. Internal.
 *
 * @module
 */

import { jsonError } from "./_errors.ts";
import { knownTraceId, newTraceId, traceIdOf } from "./_trace.ts";

/**
 * The path of a request URL, without building a `URL`.
 *
 * @param url The request URL.
 * @returns The path, still percent-encoded.
 */
export function pathOf(url: string): string {
  const start = url.indexOf("/", url.indexOf("//") + 2);
  if (start === -1) return "/";
  let end = url.length;
  for (let i = start; i < url.length; i++) {
    const c = url.charCodeAt(i);
    if (c === 63 || c === 35) {
      end = i;
      break;
    }
  }
  return url.slice(start, end);
}

/**
 * The async-context values of a request: `request`, and `traceId` computed on first use (a
 * prototype getter, so creating the values costs one small object). Nested `runInContext()`
 * scopes keep the prototype, so they see the same trace id.
 *
 * Once a unary response is ready the dispatcher calls `release()`: the async context frame
 * outlives the request (promises created during it keep it), and a frame that still held the
 * request kept its whole object graph alive through garbage collections, which cost more than
 * the rest of the request. A trace id first asked for after that (work that outlives the
 * response) is a new one.
 */
export class RequestValues {
  /** The request, until `release()`. */
  request: Request | undefined;
  /** The trace id, once fixed without the request. */
  _traceId: string | undefined = undefined;

  constructor(request: Request) {
    this.request = request;
  }

  get traceId(): string {
    const req = this.request;
    if (req !== undefined) return traceIdOf(req);
    return this._traceId ??= newTraceId();
  }

  /** Drops the request, keeping the trace id if it was computed. */
  release(): void {
    const req = this.request;
    if (req === undefined) return;
    this._traceId = knownTraceId(req);
    this.request = undefined;
  }
}

/** The response of a HEAD request: the same status and headers, no body. */
export function stripBody(res: Response): Response {
  res.body?.cancel().catch(() => {});
  return new Response(null, {
    status: res.status,
    statusText: res.statusText,
    headers: res.headers,
  });
}

const catchAllNames = new Map<string, string | undefined>();

/**
 * Percent-decodes path parameters (only those that need it); a 400 response for malformed
 * encoding, a NUL, or `.`/`..` segments in a catch-all.
 */
export function decodeParams(
  raw: Record<string, string>,
  pattern: string,
): Record<string, string> | Response {
  let catchAll = catchAllNames.get(pattern);
  if (catchAll === undefined && !catchAllNames.has(pattern)) {
    catchAll = /\*(\w+)$/.exec(pattern)?.[1];
    catchAllNames.set(pattern, catchAll);
  }
  let out: Record<string, string> | undefined;
  for (const key in raw) {
    const encoded = raw[key];
    if (key !== catchAll && !encoded.includes("%")) continue; // nothing to decode: keep as is
    let value: string;
    try {
      value = decodeURIComponent(encoded);
    } catch {
      return jsonError(400, `Malformed percent-encoding in path parameter "${key}"`);
    }
    if (value.includes("\0")) {
      return jsonError(400, `Path parameter "${key}" contains a NUL character`);
    }
    if (key === catchAll) {
      const segments = encoded.split("/").map((s) => {
        try {
          return decodeURIComponent(s);
        } catch {
          return s;
        }
      });
      if (segments.some((s) => s === ".." || s === "." || s.includes("/") || s.includes("\\"))) {
        return jsonError(400, `Path parameter "${key}" must not contain "." or ".." segments`);
      }
    }
    (out ??= { ...raw })[key] = value;
  }
  return out ?? raw;
}
