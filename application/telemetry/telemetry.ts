/**
 * `telemetry()`: metrics and traces through OpenTelemetry (`npm:@opentelemetry/api`, imported
 * by `_otel.ts` only, and loaded only when the plugin is set up).
 *
 * Metrics: in `setup` it makes the application's meter (`ctx.meter`) an OpenTelemetry meter, so
 * every part of the app records through it (the events member records `events.*` there), and
 * adds a middleware that records, for every HTTP request:
 *
 * - `http.server.request.count` (counter, `{request}`)
 * - `http.server.request.duration` (histogram, `ms`, time until the response head is ready)
 *
 * both with the attributes `http.request.method`, `http.response.status_code` and, when a route
 * matched, `http.route` (the pattern, such as `/users/:id`, never the raw path).
 *
 * Traces: it makes `ctx.tracer` an OpenTelemetry tracer. Every HTTP request gets a SERVER span
 * (`GET /users/:id`), every publish a PRODUCER span and every delivery attempt a CONSUMER span
 * (the `events()` plugin records those), joined into one trace through the W3C trace context
 * that messages carry. Sampling is the tracer provider's: a parent-based sampler is honoured on
 * every hop.
 *
 * Meter and tracer come from `meterProvider` / `tracerProvider` or the global providers: with
 * `OTEL_DENO=true` Deno's built-in exporter ships both; in tests pass SDK providers with
 * in-memory readers and exporters.
 *
 * @module
 */

import type { AppContext, Plugin } from "@fw/runtime";
import type { HttpTelemetry } from "./_http.ts";
import type { TelemetryMeter, TelemetryMeterProvider } from "./_meter.ts";

export type { TelemetryMeter, TelemetryMeterProvider };

/**
 * The part of an OpenTelemetry `TracerProvider` that `telemetry()` uses: an SDK
 * `BasicTracerProvider` or the global one from `@opentelemetry/api` fits.
 */
export interface TelemetryTracerProvider {
  /** The tracer of an instrumentation scope. */
  getTracer(name: string, version?: string): unknown;
}

/** Options of {@linkcode telemetry}. */
export interface TelemetryOptions {
  /** Where instruments come from (default: the global OpenTelemetry meter provider). */
  readonly meterProvider?: TelemetryMeterProvider;
  /** The meter's name (default `"fw"`). */
  readonly meterName?: string;
  /** Record the HTTP request metrics (default true). */
  readonly http?: boolean;
  /**
   * Where spans come from (default: the global OpenTelemetry tracer provider, which Deno's
   * built-in exporter serves under `OTEL_DENO=true` and which makes no spans otherwise).
   */
  readonly tracerProvider?: TelemetryTracerProvider;
  /** Make spans (default true). `false` keeps metrics only. */
  readonly tracing?: boolean;
  /** The tracer's name (default `"fw"`). */
  readonly tracerName?: string;
  /**
   * Add `enduser.id` (the `sub` of the user `oauth()` verified) to request spans (default
   * false: spans carry no personal data unless the app opts in).
   */
  readonly enduser?: boolean;
}

/**
 * Creates the telemetry plugin. Add it before the plugins that record metrics or spans (its
 * `setup` sets `ctx.meter` and `ctx.tracer`; without it both are no-ops and nothing is traced).
 *
 * @param options Providers, names, and what to record.
 * @returns The plugin.
 * @throws {TypeError} When `meterProvider` has no `getMeter()` or `tracerProvider` no
 *   `getTracer()`.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { application } from "@fw/application";
 * import { telemetry } from "@fw/application/telemetry";
 * const app = application().use(telemetry());
 * await app.warmup();
 * app.context.meter.counter("jobs.done").add(); // recorded through OpenTelemetry
 * assert.equal(app.context.tracer?.enabled, true);
 * assert.equal((await app.request("/nothing")).status, 404);
 * ```
 */
export function telemetry(options: TelemetryOptions = {}): Plugin {
  const provider = options.meterProvider;
  if (provider !== undefined && typeof provider?.getMeter !== "function") {
    throw new TypeError(
      'Invalid telemetry() option "meterProvider": expected an OpenTelemetry MeterProvider',
    );
  }
  const tracerProvider = options.tracerProvider;
  if (tracerProvider !== undefined && typeof tracerProvider?.getTracer !== "function") {
    throw new TypeError(
      'Invalid telemetry() option "tracerProvider": expected an OpenTelemetry TracerProvider',
    );
  }
  // The middleware's tracer: the one set here, or what a later plugin put in front of it
  // (the operations dashboard keeps spans that way), read once at warmup.
  const http: { -readonly [K in keyof HttpTelemetry]: HttpTelemetry[K] } = { enduser: false };
  return {
    name: "telemetry",
    warmup(ctx: AppContext) {
      if (http.tracer !== undefined && ctx.tracer?.enabled) http.tracer = ctx.tracer;
    },
    async setup(ctx: AppContext) {
      const [otel, { OtelMeterAdapter }, { httpMiddleware }] = await Promise.all([
        import("./_otel.ts"),
        import("./_meter.ts"),
        import("./_http.ts"),
      ]);
      const source = provider ?? otel.globalMeterProvider();
      const meter = new OtelMeterAdapter(source.getMeter(options.meterName ?? "fw"));
      ctx.setMeter(meter);
      const tracer = options.tracing === false
        ? undefined
        : otel.otelTracer(tracerProvider, options.tracerName ?? "fw");
      if (tracer !== undefined) ctx.setTracer?.(tracer);
      const metrics = options.http === false ? undefined : {
        count: meter.counter("http.server.request.count", {
          description: "HTTP requests served",
          unit: "{request}",
        }),
        duration: meter.histogram("http.server.request.duration", {
          description: "Time to answer an HTTP request (until the response head)",
          unit: "ms",
        }),
      };
      if (metrics === undefined && tracer === undefined) return;
      if (metrics) http.metrics = metrics;
      if (tracer) http.tracer = tracer;
      http.enduser = options.enduser === true;
      ctx.addMiddleware(httpMiddleware(http));
    },
  };
}
