import assert from "node:assert/strict";
import { ManualClock, systemClock } from "./clock.ts";

Deno.test("ManualClock.advance() fires due timers in time order and moves now()", async () => {
  const clock = new ManualClock(1000);
  const fired: string[] = [];
  clock.setTimeout(() => fired.push(`b@${clock.now()}`), 200);
  clock.setTimeout(() => fired.push(`a@${clock.now()}`), 100);
  clock.setTimeout(() => fired.push(`c@${clock.now()}`), 300);
  await clock.advance(250);
  assert.deepEqual(fired, ["a@1100", "b@1200"]);
  assert.equal(clock.now(), 1250);
  assert.equal(clock.pending, 1);
});

Deno.test("ManualClock.advance() runs timers registered by async work of an earlier timer", async () => {
  const clock = new ManualClock(0);
  const fired: number[] = [];
  clock.setTimeout(async () => {
    await Promise.resolve();
    fired.push(clock.now());
    clock.setTimeout(() => fired.push(clock.now()), 1000);
  }, 1000);
  await clock.advance(2000);
  assert.deepEqual(fired, [1000, 2000]);
});

Deno.test("ManualClock.clearTimeout() cancels a pending timer", async () => {
  const clock = new ManualClock();
  let fired = false;
  const h = clock.setTimeout(() => fired = true, 10);
  clock.clearTimeout(h);
  await clock.advance(100);
  assert.equal(fired, false);
  assert.equal(clock.pending, 0);
});

Deno.test("ManualClock.runAll() drains timers and next() reports when none is left", async () => {
  const clock = new ManualClock();
  let n = 0;
  const tick = () => {
    if (++n < 5) clock.setTimeout(tick, 1000);
  };
  clock.setTimeout(tick, 1000);
  assert.equal(await clock.runAll(), 5);
  assert.equal(n, 5);
  assert.equal(clock.now(), 5000);
  assert.equal(await clock.next(), false);
});

Deno.test("systemClock schedules a real timer", async () => {
  const start = systemClock.now();
  await new Promise<void>((resolve) => systemClock.setTimeout(resolve, 5));
  assert.ok(systemClock.now() >= start);
  const h = systemClock.setTimeout(() => assert.fail("cancelled timer fired"), 1);
  systemClock.clearTimeout(h);
});
