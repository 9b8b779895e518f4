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
  Counter as OtelCounter,
  Histogram as OtelHistogram,
  Meter as OtelMeter,
  MeterProvider,
} from "@opentelemetry/api";
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

export type { MeterProvider };

/** Options of {@linkcode telemetry}. */
export interface TelemetryOptions {
  /** Where instruments come from (default: the global OpenTelemetry meter provider). */
  readonly meterProvider?: MeterProvider;
  /** The meter's name (default `"fw"`). */
  readonly meterName?: string;
  /** Record the HTTP request metrics (default true). */
  readonly http?: boolean;
}

/** A runtime {@linkcode Meter} backed by an OpenTelemetry meter; instruments are cached by name. */
class OtelMeterAdapter implements Meter {
  readonly #meter: OtelMeter;
  readonly #counters = new Map<string, Counter>();
  readonly #histograms = new Map<string, Histogram>();

  constructor(meter: OtelMeter) {
    this.#meter = meter;
  }

  counter(name: string, options?: InstrumentOptions): Counter {
    let c = this.#counters.get(name);
    if (c === undefined) {
      const otel: OtelCounter = this.#meter.createCounter(name, options);
      c = { add: (value = 1, attributes?: MetricAttributes) => otel.add(value, attributes) };
      this.#counters.set(name, c);
    }
    return c;
  }

  histogram(name: string, options?: InstrumentOptions): Histogram {
    let h = this.#histograms.get(name);
    if (h === undefined) {
      const otel: OtelHistogram = this.#meter.createHistogram(name, options);
      h = otel;
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
      const otel = (provider ?? metrics.getMeterProvider()).getMeter(options.meterName ?? "fw");
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
