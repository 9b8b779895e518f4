/**
 * `telemetry()`: metrics through OpenTelemetry (`npm:@opentelemetry/api`; this is the one module
 * that imports it, and only when the plugin is set up).
 *
 * In `setup` it makes the application's meter (`ctx.meter`) an OpenTelemetry meter, so every
 * part of the app records through it (the events member records `events.*` there), and adds a
 * middleware that records, for every HTTP request:
 *
 * - `http.server.request.count` (counter, `{request}`)
 * - `http.server.request.duration` (histogram, `ms`, time until the response head is ready)
 *
 * both with the attributes `http.request.method`, `http.response.status_code` and, when a route
 * matched, `http.route` (the pattern, such as `/users/:id`, never the raw path).
 *
 * The meter comes from `meterProvider` or the global provider: with `OTEL_DENO=true` Deno's
 * built-in exporter ships it; in tests pass an SDK `MeterProvider` with an in-memory reader.
 *
 * @module
 */

import type {
  AppContext,
  Counter,
  Histogram,
  InstrumentOptions,
  Meter,
  MetricAttributes,
  Plugin,
} from "@fw/runtime";
import { matchedRoutes } from "./_route_info.ts";

/** The part of an OpenTelemetry `Meter` that `telemetry()` uses. */
export interface TelemetryMeter {
  /** Creates a counter. */
  createCounter(
    name: string,
    options?: InstrumentOptions,
  ): { add(value: number, attributes?: MetricAttributes): void };
  /** Creates a histogram. */
  createHistogram(
    name: string,
    options?: InstrumentOptions,
  ): { record(value: number, attributes?: MetricAttributes): void };
}

/**
 * The part of an OpenTelemetry `MeterProvider` that `telemetry()` uses: an SDK `MeterProvider`
 * or the global one from `@opentelemetry/api` fits.
 */
export interface TelemetryMeterProvider {
  /** The meter of an instrumentation scope. */
  getMeter(name: string): TelemetryMeter;
}

/** Options of {@linkcode telemetry}. */
export interface TelemetryOptions {
  /** Where instruments come from (default: the global OpenTelemetry meter provider). */
  readonly meterProvider?: TelemetryMeterProvider;
  /** The meter's name (default `"fw"`). */
  readonly meterName?: string;
  /** Record the HTTP request metrics (default true). */
  readonly http?: boolean;
}

/** A runtime {@linkcode Meter} backed by an OpenTelemetry meter; instruments are cached by name. */
class OtelMeterAdapter implements Meter {
  readonly #meter: TelemetryMeter;
  readonly #counters = new Map<string, Counter>();
  readonly #histograms = new Map<string, Histogram>();

  constructor(meter: TelemetryMeter) {
    this.#meter = meter;
  }

  counter(name: string, options?: InstrumentOptions): Counter {
    let c = this.#counters.get(name);
    if (c === undefined) {
      const otel = this.#meter.createCounter(name, options);
      c = { add: (value = 1, attributes?: MetricAttributes) => otel.add(value, attributes) };
      this.#counters.set(name, c);
    }
    return c;
  }

  histogram(name: string, options?: InstrumentOptions): Histogram {
    let h = this.#histograms.get(name);
    if (h === undefined) {
      h = this.#meter.createHistogram(name, options);
      this.#histograms.set(name, h);
    }
    return h;
  }
}

/**
 * Creates the telemetry plugin. Add it before the plugins that record metrics (its `setup` sets
 * `ctx.meter`; without it the meter is a no-op).
 *
 * @param options Meter provider, meter name, and whether to record HTTP metrics.
 * @returns The plugin.
 * @throws {TypeError} When `meterProvider` has no `getMeter()`.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { application, telemetry } from "@fw/application";
 * const app = application().use(telemetry());
 * await app.warmup();
 * app.context.meter.counter("jobs.done").add(); // recorded through OpenTelemetry
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
  return {
    name: "telemetry",
    async setup(ctx: AppContext) {
      const { metrics } = await import("@opentelemetry/api");
      const source: TelemetryMeterProvider = provider ?? metrics.getMeterProvider();
      const otel = source.getMeter(options.meterName ?? "fw");
      const meter = new OtelMeterAdapter(otel);
      ctx.setMeter(meter);
      if (options.http === false) return;
      const count = meter.counter("http.server.request.count", {
        description: "HTTP requests served",
        unit: "{request}",
      });
      const duration = meter.histogram("http.server.request.duration", {
        description: "Time to answer an HTTP request (until the response head)",
        unit: "ms",
      });
      const record = (req: Request, status: number, start: number) => {
        const route = matchedRoutes.get(req);
        const attributes: Record<string, string | number> = {
          "http.request.method": req.method,
          "http.response.status_code": status,
        };
        if (route !== undefined) attributes["http.route"] = route;
        count.add(1, attributes);
        duration.record(performance.now() - start, attributes);
      };
      ctx.addMiddleware((req, _info, next) => {
        const start = performance.now();
        return next().then((res) => {
          record(req, res.status, start);
          return res;
        }, (error) => {
          record(req, 500, start);
          throw error;
        });
      });
    },
  };
}
