import assert from "node:assert/strict";
import { ManualClock } from "@fw/runtime";
import { checkMaxDelay, dueTime } from "./_delay.ts";
import { DelayQueue } from "./_delay_queue.ts";

Deno.test("dueTime() turns delay and deliverAt into one due time", () => {
  assert.deepEqual(dueTime("t", 500, undefined, 1_000), { deliverAt: 1_500, option: "delay" });
  assert.deepEqual(dueTime("t", undefined, new Date(4_000), 1_000), {
    deliverAt: 4_000,
    option: "deliverAt",
  });
  assert.deepEqual(dueTime("t", undefined, 3_000, 1_000), {
    deliverAt: 3_000,
    option: "deliverAt",
  });
  assert.equal(dueTime("t", 0, undefined, 1_000), undefined, "delay 0 is now");
  assert.equal(dueTime("t", undefined, 999, 1_000), undefined, "a past time is now");
  assert.equal(dueTime("t", undefined, undefined, 1_000), undefined);
});

Deno.test("dueTime() names the option of a bad value", () => {
  const bad: Array<[unknown, unknown, RegExp]> = [
    [-1, undefined, /^Invalid publish option "delay" for topic "t": .*got "-1"$/],
    [NaN, undefined, /"delay".*got "NaN"/],
    [Infinity, undefined, /"delay"/],
    ["10", undefined, /"delay"/],
    [undefined, new Date("x"), /"deliverAt".*an invalid Date/],
    [undefined, -3, /"deliverAt"/],
    [undefined, "2030-01-01", /"deliverAt"/],
    [1, 5, /^Invalid publish options "delay" and "deliverAt" for topic "t": set at most one/],
  ];
  for (const [delay, at, message] of bad) {
    assert.throws(
      () => dueTime("t", delay, at, 0),
      (e: Error) => e instanceof TypeError && message.test(e.message),
    );
  }
});

Deno.test("checkMaxDelay() refuses a time further ahead than the transport holds", () => {
  const caps = { ordering: false, persistent: true, external: true, admission: false };
  checkMaxDelay("t", { deliverAt: 1_100, option: "delay" }, 100, "redis", {
    ...caps,
    maxDelay: 1_000,
  });
  assert.throws(
    () =>
      checkMaxDelay("t", { deliverAt: 1_101, option: "delay" }, 100, "redis", {
        ...caps,
        maxDelay: 1_000,
      }),
    /^TypeError: Invalid publish option "delay" for topic "t": transport "redis" holds messages at most 1000 ms ahead, got 1001 ms$/,
  );
  assert.throws(
    () => checkMaxDelay("t", { deliverAt: 5, option: "deliverAt" }, 0, "x", caps),
    /"deliverAt" for topic "t": transport "x" cannot delay messages/,
  );
});

Deno.test("DelayQueue releases by due time, then arrival, never early", async () => {
  const clock = new ManualClock(0);
  const out: Array<[string, number]> = [];
  const q = new DelayQueue<string>(clock, (v) => out.push([v, clock.now()]));
  q.add(300, "c");
  q.add(100, "a1");
  q.add(200, "b");
  q.add(100, "a2");
  q.add(100, "a3");
  await clock.advance(99);
  assert.deepEqual(out, []);
  await clock.advance(1);
  assert.deepEqual(out, [["a1", 100], ["a2", 100], ["a3", 100]]);
  await clock.advance(250);
  assert.deepEqual(out.slice(3), [["b", 200], ["c", 300]]);
  assert.equal(q.size, 0);
});

Deno.test("DelayQueue reaches a due time beyond the longest timer in steps", async () => {
  const clock = new ManualClock(0);
  const out: number[] = [];
  const q = new DelayQueue<number>(clock, (v) => out.push(v));
  const far = 40 * 24 * 3600 * 1000;
  q.add(far, 1);
  await clock.advance(2 ** 31);
  assert.deepEqual(out, [], "not released when the first timer step ends");
  await clock.advance(far - 2 ** 31);
  assert.deepEqual(out, [1]);
  q.add(far + 10, 2);
  q.close();
  await clock.advance(100);
  assert.deepEqual(out, [1], "close drops what waits");
});
