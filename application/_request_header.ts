/**
 * Reads one request header without making the request's `Headers` object. Internal.
 *
 * Why: once `req.headers` has been read, `Deno.serve` copies every request header before it
 * closes the request and finishes the response through a promise instead of on its synchronous
 * fast path (a handler may still read the headers after its response). Reading `Accept` for
 * content negotiation that way cost 5-7% of throughput on a validated GET. A request from
 * `Deno.serve` keeps its connection's request under a symbol whose `header(name)` reads one header
 * straight from the server (the same call `req.headers.get()` ends up in, values of repeated
 * headers joined alike), so fw reads the headers it needs there and leaves `req.headers`
 * untouched. Any other request (built with `new Request()`, or one whose server request is gone)
 * and any runtime without that member use `req.headers.get()` as before.
 *
 * @module
 */

interface ServerRequest {
  header(name: string): string | null;
}

/** The symbol of a request's inner request: looked up on the first request, `null` if absent. */
let innerKey: symbol | null | undefined;

function keyOf(req: Request): symbol | null {
  for (const key of Object.getOwnPropertySymbols(req)) {
    if (key.description === "request") return key;
  }
  return null;
}

/**
 * The value of one request header, as `req.headers.get(name)` returns it.
 *
 * @param req The request.
 * @param name The header name, in lower case.
 * @returns The value, or `null` when the request has no such header.
 */
export function requestHeader(req: Request, name: string): string | null {
  const key = innerKey === undefined ? (innerKey = keyOf(req)) : innerKey;
  if (key !== null) {
    const inner = (req as unknown as Record<symbol, ServerRequest | undefined>)[key];
    if (inner !== undefined && typeof inner.header === "function") {
      try {
        return inner.header(name);
      } catch {
        // the server request is closed: fall through
      }
    }
  }
  return req.headers.get(name);
}
