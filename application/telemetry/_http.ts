/**
 * The HTTP part of `telemetry()`: one middleware that records the request metrics and, with
 * tracing on, the request's SERVER span (stable HTTP semantic-convention attributes, the
 * incoming W3C trace context continued, the route pattern as the name once matched). Loaded by
 * the plugin's `setup`. Internal.
 *
 * @module
 */

import {
  type AuthUser,
  type Counter,
  type Histogram,
  isValidSpanContext,
  type Middleware,
  parseTraceparent,
  type Span,
  SPAN_KEY,
  type SpanAttributeValue,
  type Tracer,
  tryContext,
} from "@fw/runtime";
import { matchedRoute, pathOf, setTraceId, streamSpans, urlOf } from "../_dispatch.ts";

/** What the middleware records. */
export interface HttpTelemetry {
  /** Request count and duration, when HTTP metrics are on. */
  readonly metrics?: { readonly count: Counter; readonly duration: Histogram };
  /** The tracer, when tracing is on. */
  readonly tracer?: Tracer;
  /** Add `enduser.id` (the verified user's `sub`). */
  readonly enduser: boolean;
}

/** Starts the SERVER span of a request and makes it the context's current span. */
function startSpan(tracer: Tracer, req: Request, enduser: boolean): Span {
  const headers = req.headers;
  const traceparent = headers.get("traceparent");
  const parent = traceparent === null
    ? undefined
    : parseTraceparent(traceparent, headers.get("tracestate"));
  const url = urlOf(req);
  const colon = url.indexOf(":");
  const hostEnd = url.indexOf("/", colon + 3);
  const host = url.slice(colon + 3, hostEnd === -1 ? undefined : hostEnd);
  const portAt = host.lastIndexOf(":");
  const attributes: Record<string, SpanAttributeValue> = {
    "http.request.method": req.method,
    "url.path": pathOf(url),
    "url.scheme": url.slice(0, colon),
    "server.address": portAt > host.lastIndexOf("]") ? host.slice(0, portAt) : host,
  };
  if (portAt > host.lastIndexOf("]")) attributes["server.port"] = Number(host.slice(portAt + 1));
  const agent = headers.get("user-agent");
  if (agent !== null) attributes["user_agent.original"] = agent;
  const values = tryContext<Record<string, unknown>>();
  const user = values?.user as AuthUser | undefined;
  if (enduser && typeof user?.sub === "string") attributes["enduser.id"] = user.sub;
  const span = tracer.startSpan(req.method, { kind: "server", parent, attributes });
  if (values !== undefined) values[SPAN_KEY] = span;
  if (isValidSpanContext(span.context)) setTraceId(req, span.context.traceId);
  return span;
}

/** Names and closes the span once the response head is ready (a stream's span stays open). */
function endSpan(span: Span, req: Request, status: number, error?: unknown): void {
  const route = matchedRoute(req);
  if (route !== undefined) {
    span.setAttribute("http.route", route);
    span.updateName(`${req.method} ${route}`);
  }
  span.setAttribute("http.response.status_code", status);
  if (status >= 500) {
    span.setAttribute("error.type", String(status));
    if (error !== undefined) span.recordException(error);
    span.setError(`HTTP ${status}`);
  }
  if (!streamSpans.has(span)) span.end();
}

/**
 * The telemetry middleware.
 *
 * @param t Metrics, tracer and options (its `tracer` is read on each request).
 * @returns The middleware.
 */
export function httpMiddleware(t: HttpTelemetry): Middleware {
  const { metrics, enduser } = t;
  const record = (req: Request, status: number, start: number) => {
    if (metrics === undefined) return;
    const route = matchedRoute(req);
    const attributes: Record<string, string | number> = {
      "http.request.method": req.method,
      "http.response.status_code": status,
    };
    if (route !== undefined) attributes["http.route"] = route;
    metrics.count.add(1, attributes);
    metrics.duration.record(performance.now() - start, attributes);
  };
  return (req, _info, next) => {
    const start = metrics === undefined ? 0 : performance.now();
    const tracer = t.tracer; // read per request: set again at warmup
    const span = tracer === undefined ? undefined : startSpan(tracer, req, enduser);
    return next().then((res) => {
      record(req, res.status, start);
      if (span !== undefined) endSpan(span, req, res.status);
      return res;
    }, (error) => {
      record(req, 500, start);
      if (span !== undefined) endSpan(span, req, 500, error);
      throw error;
    });
  };
}
