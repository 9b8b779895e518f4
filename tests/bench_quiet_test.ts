/**
 * The benchmarks' load guard (`scripts/_quiet.ts`): a baseline within 1.5x of its quiet figure
 * lets a verdict through; a slower one replaces the verdict with the reason, naming the
 * baseline, its figure, its quiet figure and the slowdown.
 */

import assert from "node:assert/strict";
import { checkBaseline, verdict } from "../scripts/_quiet.ts";

Deno.test("a baseline near its quiet figure lets the verdict through", () => {
  const time = checkBaseline("startup/bare", 30); // quiet 22 ms: 1.36x
  assert.equal(time.quiet, true);
  assert.equal(time.text, "baseline startup/bare 30 ms (quiet 22, 1.36x slower)");
  const rate = checkBaseline("http/b/bare", 100_000); // quiet 130,185 req/s: 1.30x
  assert.equal(rate.quiet, true);
  assert.equal(verdict([time, rate], "goal met"), "goal met");
});

Deno.test("a slow baseline replaces the verdict with the reason", () => {
  const slow = checkBaseline("startup/bare", 64.2);
  assert.equal(slow.quiet, false);
  assert.equal(slow.slowdown.toFixed(2), "2.92");
  const line = verdict([checkBaseline("http/b/bare", 120_000), slow], "goal met");
  assert.match(
    line,
    /^no verdict: the machine is loaded \(baseline startup\/bare 64\.2 ms \(quiet 22, 2\.92x slower\)\), run again/,
  );
  assert.ok(!line.includes("goal met"), line);
});

Deno.test("a baseline without a recorded quiet figure says so and does not block the verdict", () => {
  const unknown = checkBaseline("startup/unknown", 10);
  assert.equal(unknown.quiet, true);
  assert.match(unknown.text, /no quiet figure recorded yet/);
  assert.equal(verdict([unknown], "goal met"), "goal met");
});
