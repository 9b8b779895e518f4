import assert from "node:assert/strict";
import { ManualClock } from "@fw/runtime";
import { requestCounter, SAMPLE_EVERY, SAMPLE_FROM } from "./_requests.ts";
import { Stats } from "./_stats.ts";

const T0 = 1_800_000_000_000;

Deno.test("requestCounter() counts every request in its second and times all of the first 100 of a second, then one in 64", async () => {
  const clock = new ManualClock(T0 + 400);
  const stats = new Stats(10);
  const { observer, stop } = requestCounter(stats, clock);
  // what the application does for a routed request: observe, then report the status if asked
  const request = (status: number) => observer("GET", "/a")?.(status);
  for (let i = 0; i < 200; i++) request(i % 2 === 0 ? 500 : 200);
  await clock.advance(600); // the next second
  request(500); // timed again
  await clock.advance(5000); // quiet seconds: the ticker stops
  request(200); // reads the clock again
  const [r] = stats.routes(clock.now());
  assert.equal(r.total, 202);
  assert.equal(r.count, 202);
  assert.equal(stats.routes(T0 + 6999)[0].count, 202); // the first second is still in the window
  assert.equal(stats.routes(T0 + 11_999)[0].count, 1); // only the last request's second is
  // timed: the first 100 of the first second (50 errors), then 128 and 192 (odd numbers here,
  // so no errors among them), then one request in each of two later seconds (one error)
  assert.deepEqual([SAMPLE_FROM, SAMPLE_EVERY], [100, 64]);
  assert.equal(r.errorRate, 51 / (100 + 2 + 2));
  stop();
});
