/**
 * A minimal metrics interface shared by the HTTP and events halves. The `telemetry()` plugin of
 * `@fw/application` backs it with an OpenTelemetry meter; {@linkcode MemoryMeter} records in
 * memory for tests; {@linkcode noopMeter} is used when telemetry is off.
 *
 * @module
 */

/** Attributes attached to one measurement. */
export type MetricAttributes = Readonly<Record<string, string | number | boolean>>;

/** A monotonically increasing counter. */
export interface Counter {
  /** Adds `value` (default 1). */
  add(value?: number, attributes?: MetricAttributes): void;
}

/** A distribution of recorded values (durations in ms, sizes in bytes). */
export interface Histogram {
  /** Records one value. */
  record(value: number, attributes?: MetricAttributes): void;
}

/** Options of an instrument. */
export interface InstrumentOptions {
  /** Human readable description. */
  description?: string;
  /** Unit, for example `ms` or `{request}`. */
  unit?: string;
}

/** Creates instruments by name. Instruments with the same name are the same instrument. */
export interface Meter {
  /** A counter named `name`. */
  counter(name: string, options?: InstrumentOptions): Counter;
  /** A histogram named `name`. */
  histogram(name: string, options?: InstrumentOptions): Histogram;
}

const noopCounter: Counter = { add() {} };
const noopHistogram: Histogram = { record() {} };

/**
 * A meter that discards everything (telemetry off).
 *
 * @example
 * ```ts
 * import { noopMeter } from "@fw/runtime";
 * noopMeter.counter("requests").add();
 * ```
 */
export const noopMeter: Meter = {
  counter: () => noopCounter,
  histogram: () => noopHistogram,
};

/** One recorded measurement of a {@linkcode MemoryMeter}. */
export interface Measurement {
  /** The recorded value (counter increment or histogram value). */
  value: number;
  /** Attributes given with it. */
  attributes: MetricAttributes;
}

/**
 * A meter that keeps every measurement in memory, for tests and the in-memory reader.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { MemoryMeter } from "@fw/runtime";
 * const meter = new MemoryMeter();
 * meter.counter("events.publish.order.created").add();
 * meter.counter("events.publish.order.created").add(2);
 * assert.equal(meter.sum("events.publish.order.created"), 3);
 * ```
 */
export class MemoryMeter implements Meter {
  readonly #data = new Map<string, { kind: "counter" | "histogram"; values: Measurement[] }>();

  #instrument(name: string, kind: "counter" | "histogram"): Measurement[] {
    let entry = this.#data.get(name);
    if (!entry) this.#data.set(name, entry = { kind, values: [] });
    else if (entry.kind !== kind) {
      throw new TypeError(`Metric "${name}" is already registered as a ${entry.kind}`);
    }
    return entry.values;
  }

  /** A counter that records into memory. */
  counter(name: string): Counter {
    const values = this.#instrument(name, "counter");
    return { add: (value = 1, attributes = {}) => void values.push({ value, attributes }) };
  }

  /** A histogram that records into memory. */
  histogram(name: string): Histogram {
    const values = this.#instrument(name, "histogram");
    return { record: (value, attributes = {}) => void values.push({ value, attributes }) };
  }

  /** Every measurement recorded under `name` (empty when none). */
  measurements(name: string): readonly Measurement[] {
    return this.#data.get(name)?.values ?? [];
  }

  /** Sum of the values recorded under `name` (counter total). */
  sum(name: string): number {
    return this.measurements(name).reduce((a, m) => a + m.value, 0);
  }

  /** Number of values recorded under `name` (histogram count). */
  count(name: string): number {
    return this.measurements(name).length;
  }

  /** Names of every instrument that has been created, sorted. */
  names(): string[] {
    return [...this.#data.keys()].sort();
  }
}
