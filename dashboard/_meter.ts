/**
 * The meter the dashboard puts in front of the application's meter: every instrument still
 * records through the meter it wraps (OpenTelemetry with `telemetry()`, else a no-op), and the
 * `events.*` instruments of the event bus also feed the dashboard's {@linkcode Stats}:
 *
 * - `events.publish.<topic>` and `events.publish.<topic>.error`: the topic's publish window;
 * - `events.handle.<topic>.success` starts the cells of one more consumer (each consumer creates
 *   its instruments once, success first, in the order the bus registers handlers), and its
 *   `.failure`, `.retry`, `.dlq`, `.dropped` and `.duration` instruments feed those cells.
 *
 * Internal.
 *
 * @module
 */

import type { Clock, Counter, Histogram, InstrumentOptions, Meter } from "@fw/runtime";
import type { HandlerCells, Stats } from "./_stats.ts";

const HANDLE = /^events\.handle\.(.+)\.(success|failure|retry|dlq|dropped|duration)$/;
const PUBLISH = /^events\.publish\.(.+?)(\.error)?$/;

type CellName = "success" | "failure" | "retry" | "dlq" | "dropped";

/** A meter that records through `inner` and into the dashboard's stats. */
export class StatsMeter implements Meter {
  /**
   * @param inner The application's meter before the dashboard.
   * @param stats Where the dashboard counts.
   * @param clock Time for the windows.
   */
  constructor(readonly inner: Meter, readonly stats: Stats, readonly clock: Clock) {}

  counter(name: string, options?: InstrumentOptions): Counter {
    const base = this.inner.counter(name, options);
    const handle = HANDLE.exec(name);
    if (handle !== null && handle[2] !== "duration") {
      const cells = handle[2] === "success"
        ? this.stats.addHandler(handle[1])
        : this.stats.lastHandler(handle[1]);
      return this.#cellCounter(base, cells, handle[2] as CellName);
    }
    const publish = handle === null ? PUBLISH.exec(name) : null;
    if (publish !== null) {
      const window = this.stats.topic(publish[1]);
      const error = publish[2] !== undefined;
      const clock = this.clock;
      return {
        add(value = 1, attributes) {
          base.add(value, attributes);
          window.add(clock.now(), error, undefined, value);
        },
      };
    }
    return base;
  }

  #cellCounter(base: Counter, cells: HandlerCells, cell: CellName): Counter {
    const clock = this.clock;
    const invocation = cell === "success" || cell === "failure";
    return {
      add(value = 1, attributes) {
        base.add(value, attributes);
        cells[cell] += value;
        if (invocation) cells.window.add(clock.now(), cell === "failure", undefined, value);
      },
    };
  }

  histogram(name: string, options?: InstrumentOptions): Histogram {
    return this.inner.histogram(name, options);
  }
}
