/**
 * The runtime {@linkcode Meter} backed by an OpenTelemetry meter (structurally typed, so this
 * module imports no npm package). Internal to `telemetry()`.
 *
 * @module
 */

import type { Counter, Histogram, InstrumentOptions, Meter, MetricAttributes } from "@fw/runtime";

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

/** A runtime {@linkcode Meter} backed by an OpenTelemetry meter; instruments are cached by name. */
export class OtelMeterAdapter implements Meter {
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
