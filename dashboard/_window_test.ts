import assert from "node:assert/strict";
import { bucketEdge, Window } from "./_window.ts";

const T0 = 1_800_000_000_000;

Deno.test("Window.summary() gives rate, error rate and percentiles over the last seconds", () => {
  const w = new Window(10);
  for (let i = 0; i < 98; i++) w.add(T0 + i * 10, false, 2);
  w.add(T0 + 990, true, 500);
  w.add(T0 + 995, true, 500);
  const s = w.summary(T0 + 999);
  assert.equal(s.count, 100);
  assert.equal(s.rate, 10); // 100 events over a 10-second window
  assert.equal(s.errorRate, 0.02);
  assert.ok(s.p50! >= 2 && s.p50! < 2 * 1.25, `p50 ${s.p50} is the bucket holding 2 ms`);
  assert.ok(s.p99! >= 500 && s.p99! < 500 * 1.25, `p99 ${s.p99} is the bucket holding 500 ms`);
});

Deno.test("Window forgets slots older than its length and keeps totals", () => {
  const w = new Window(3);
  w.add(T0, true, 1);
  w.add(T0 + 1000, false);
  assert.equal(w.summary(T0 + 2999).count, 2);
  assert.equal(w.summary(T0 + 3000).count, 1); // the first second left the window
  w.add(T0 + 3500, false); // reuses the slot of the first second
  const s = w.summary(T0 + 3600);
  assert.deepEqual([s.count, s.errorRate, s.p50], [2, 0, undefined]);
  assert.deepEqual([w.total, w.totalErrors], [3, 1]);
});

Deno.test("bucketEdge() grows by a quarter from 0.05 ms", () => {
  assert.ok(Math.abs(bucketEdge(0) - 0.0625) < 1e-9);
  assert.ok(Math.abs(bucketEdge(1) / bucketEdge(0) - 1.25) < 1e-9);
});

Deno.test("Window.tally() counts an event whose outcome is recorded apart, or not at all", () => {
  const w = new Window(10);
  for (let i = 0; i < 200; i++) w.tally(T0 + 500);
  for (let i = 0; i < 4; i++) w.observe(T0 + 500, i === 0, 1);
  const s = w.summary(T0 + 900);
  assert.equal(s.count, 200); // the rate counts every event
  assert.equal(s.rate, 20);
  assert.equal(s.errorRate, 1 / 4); // errors and latency come from what was observed
  assert.ok(s.p50! >= 1 && s.p50! < 1.25);
});
