/**
 * The errors the typed client throws. A response, whatever its status, is a result and not an
 * error; these are for streams, which cannot return a status once they are running.
 *
 * @module
 */

/**
 * A stream call failed: the server refused to open it (`status` is the HTTP status and `body` the
 * error body), sent its error envelope while running (an SSE `error` event, a WebSocket
 * `{"error": ...}` message), or the connection was lost (`status` 0, `closeCode` when a socket
 * closed abnormally).
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { ApiStreamError } from "@fw/application/client";
 * const e = new ApiStreamError("Stream GET /prices failed: 404", 404, { statusCode: 404 });
 * assert.equal(e.status, 404);
 * assert.equal(e.name, "ApiStreamError");
 * ```
 */
export class ApiStreamError extends Error {
  /** HTTP status of the refusal or of the envelope; 0 for a lost connection. */
  readonly status: number;
  /** The error body, when the server sent one. */
  readonly body: unknown;
  /** The WebSocket close code, for a socket that closed abnormally. */
  readonly closeCode: number | undefined;

  /**
   * Creates the error.
   *
   * @param message What failed.
   * @param status The HTTP status (0 when there is none).
   * @param body The error body.
   * @param closeCode The WebSocket close code.
   */
  constructor(message: string, status: number, body?: unknown, closeCode?: number) {
    super(message);
    this.name = "ApiStreamError";
    this.status = status;
    this.body = body;
    this.closeCode = closeCode;
  }
}

/** The status of an error body (`statusCode`), or `fallback`. */
export function statusOf(body: unknown, fallback: number): number {
  const code = (body as { statusCode?: unknown } | null)?.statusCode;
  return typeof code === "number" ? code : fallback;
}
