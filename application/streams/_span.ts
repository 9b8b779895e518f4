/**
 * The span of a stream connection: with tracing on, the request's SERVER span lasts for the
 * connection's life (the HTTP middleware leaves it open) and ends when the connection closes,
 * with one `stream.closed` event carrying the close code (WebSocket) and the message counts.
 * Internal.
 *
 * @module
 */

import { type Span, SPAN_KEY } from "@fw/runtime";
import { streamSpans } from "../_dispatch.ts";
import type { StreamRequestContext } from "./_context.ts";
import type { CloseInfo } from "./websocket.ts";

/** The request's traced span, kept by a connection's context values. */
function spanOf(store: unknown): Span | undefined {
  return typeof store === "object" && store !== null
    ? (store as Record<string, unknown>)[SPAN_KEY] as Span | undefined
    : undefined;
}

/**
 * Takes over the request's span, if any, for the connection's life.
 *
 * @param store The connection's context values.
 */
export function holdStreamSpan(store: unknown): void {
  const span = spanOf(store);
  if (span !== undefined) streamSpans.add(span);
}

/**
 * Ends a connection's span, if any.
 *
 * @param store The connection's context values.
 * @param ctx The connection's context.
 * @param closed What the transport's `closed` settled with (a `CloseInfo` for a WebSocket).
 */
export function endStreamSpan(store: unknown, ctx: StreamRequestContext, closed: unknown): void {
  const span = spanOf(store);
  if (span === undefined) return;
  const attributes: Record<string, string | number> = {
    "fw.stream.transport": ctx._ws !== undefined ? "websocket" : "sse",
    "fw.stream.messages_sent": ctx._sent,
  };
  if (ctx._ws !== undefined) {
    attributes["fw.stream.messages_received"] = ctx._ws.received;
    const code = (closed as CloseInfo | undefined)?.code;
    if (typeof code === "number") attributes["fw.stream.close_code"] = code;
  }
  span.addEvent("stream.closed", attributes);
  span.end();
}
