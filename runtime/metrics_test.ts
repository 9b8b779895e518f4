import assert from "node:assert/strict";
import { MemoryMeter, noopMeter } from "./metrics.ts";

Deno.test("MemoryMeter records counters and histograms with attributes", () => {
  const meter = new MemoryMeter();
  meter.counter("http.requests").add(1, { status: 200 });
  meter.counter("http.requests").add(2, { status: 404 });
  meter.histogram("http.duration").record(12.5);
  assert.equal(meter.sum("http.requests"), 3);
  assert.equal(meter.count("http.duration"), 1);
  assert.deepEqual(meter.measurements("http.requests")[1], {
    value: 2,
    attributes: { status: 404 },
  });
  assert.deepEqual(meter.names(), ["http.duration", "http.requests"]);
  assert.equal(meter.sum("missing"), 0);
});

Deno.test("MemoryMeter rejects one name used as two instrument kinds", () => {
  const meter = new MemoryMeter();
  meter.counter("x");
  assert.throws(() => meter.histogram("x"), /Metric "x" is already registered as a counter/);
});

Deno.test("noopMeter accepts measurements and keeps nothing", () => {
  noopMeter.counter("a").add(5);
  noopMeter.histogram("b").record(1);
});
