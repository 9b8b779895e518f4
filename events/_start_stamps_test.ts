import assert from "node:assert/strict";
import {
  type Clock,
  createLogger,
  ManualClock,
  MemoryMeter,
  MemorySink,
  type Meter,
  systemClock,
  type TimerHandle,
} from "@fw/runtime";
import { EventBus } from "./event_bus.ts";
import { handler } from "./handler.ts";
import { getPublisher } from "./publisher.ts";
import { topic } from "./topic.ts";
import { Int, Uuid } from "@fw/runtime";
import { MemoryBroker } from "./transports/memory_broker.ts";
import { STAMP_TICK_MS, startStampsOf } from "./_start_stamps.ts";

const Order = topic("orders.stamped", { id: Uuid, total: Int });
const ID = "6f1c2a5e-8a3b-4f1e-9d2c-1b2a3c4d5e6f";

/** A bus on a manual clock; no meter and `warn` logs unless told: starts are stamped per tick. */
function setup(options: { meter?: Meter; level?: "info" | "warn" } = {}) {
  const clock = new ManualClock(0);
  const sink = new MemorySink();
  const bus = new EventBus({
    transports: { memory: new MemoryBroker({ clock }) },
    clock,
    ...(options.meter ? { meter: options.meter } : {}),
    logger: createLogger({ sink, level: options.level ?? "warn", clock: () => clock.now() }),
    random: () => 0.5,
  });
  const publish = getPublisher(Order, { bus });
  const handled = () =>
    sink.records.filter((r) => r.message === "message handled").map((r) =>
      r.fields.event as { outcome: string; duration: number; error?: string }
    );
  return { clock, bus, publish, handled };
}

/** Publishes at `at`, advancing the clock there, and returns when the time-out aborted. */
async function timeOutAt(
  options: Parameters<typeof setup>[0],
  timeout: number,
  at: number,
): Promise<{ abortedAt: number; handled: ReturnType<ReturnType<typeof setup>["handled"]> }> {
  const { clock, bus, publish, handled } = setup(options);
  let signal: AbortSignal | undefined;
  await bus.add(
    handler(Order).options({ timeout, maxRetries: 0, dlq: false }).handle((m) => {
      signal = m.signal;
      return new Promise(() => {});
    }),
  );
  await bus.start();
  await clock.advance(at);
  await publish({ id: ID, total: 1 });
  assert.ok(signal, "the handler started");
  await clock.advance(timeout - 1);
  for (let i = 0; !signal.aborted && i <= 2 * STAMP_TICK_MS; i++) await clock.advance(1);
  const abortedAt = clock.now();
  await bus.stop();
  return { abortedAt, handled: handled() };
}

Deno.test("a consumer that records no durations times out no earlier than `timeout` after the start, and at most a tick later", async () => {
  for (const at of [0, 3, STAMP_TICK_MS - 1]) {
    const { abortedAt, handled } = await timeOutAt({}, 1000, at);
    assert.ok(abortedAt >= at + 1000, `started at ${at}, timed out at ${abortedAt}: early`);
    assert.ok(
      abortedAt <= at + 1000 + STAMP_TICK_MS,
      `started at ${at}, timed out at ${abortedAt}: more than a tick late`,
    );
    assert.deepEqual(handled.map((e) => [e.outcome, e.error]), [
      ["discarded", "Handler timed out after 1000 ms"],
    ]);
  }
});

Deno.test("a consumer that records durations, or has a time-out under 1 s, times out exactly", async () => {
  assert.equal((await timeOutAt({ meter: new MemoryMeter() }, 1000, 3)).abortedAt, 1003);
  assert.equal((await timeOutAt({ level: "info" }, 1000, 3)).abortedAt, 1003);
  assert.equal((await timeOutAt({}, 999, 3)).abortedAt, 1002);
});

Deno.test("a failure's duration is a lower bound within a tick when durations are not recorded, exact when they are", async () => {
  for (const metered of [false, true]) {
    const { clock, bus, publish, handled } = setup(metered ? { meter: new MemoryMeter() } : {});
    await bus.add(
      handler(Order).options({ maxRetries: 0, dlq: false }).handle(async (m) => {
        if (m.payload.total === 1) throw new Error("at once");
        await new Promise<void>((r) => clock.setTimeout(r, 500));
        throw new Error("after 500 ms");
      }),
    );
    await bus.start();
    await clock.advance(3);
    await publish({ id: ID, total: 1 });
    await publish({ id: ID, total: 2 });
    await clock.advance(1000);
    const lines = handled();
    assert.deepEqual(lines.map((e) => e.error), ["at once", "after 500 ms"]);
    assert.equal(lines[0].duration, 0);
    if (metered) assert.equal(lines[1].duration, 500);
    else {
      assert.ok(
        lines[1].duration <= 500 && lines[1].duration >= 500 - STAMP_TICK_MS,
        `duration ${lines[1].duration}`,
      );
    }
    await bus.stop();
  }
});

Deno.test("consumers on one clock share one stamp per tick, and a stopped consumer withdraws its request", async () => {
  const { clock, bus, publish } = setup();
  const stamps = startStampsOf(clock);
  const pending: Array<() => void> = [];
  for (const group of ["a", "b"]) {
    await bus.add(
      handler(Order).options({ group }).handle(() => new Promise<void>((r) => pending.push(r))),
    );
  }
  await bus.start();
  const timers = clock.pending;
  await publish({ id: ID, total: 1 });
  assert.equal(stamps.waiting, 2);
  assert.equal(clock.pending, timers + 1, "one timer for both consumers");
  await clock.advance(STAMP_TICK_MS);
  assert.equal(stamps.waiting, 0);
  await publish({ id: ID, total: 2 });
  assert.equal(stamps.waiting, 2);
  for (const r of pending) r();
  await bus.stop();
  assert.equal(stamps.waiting, 0);
});

Deno.test("on the real clock, stopping before the tick withdraws the request and its timer", async () => {
  // the system clock, with its pending timers counted
  const live = new Set<TimerHandle>();
  const clock: Clock = {
    now: () => systemClock.now(),
    setTimeout(fn, ms) {
      const handle = systemClock.setTimeout(() => {
        live.delete(handle);
        fn();
      }, ms);
      live.add(handle);
      return handle;
    },
    clearTimeout(handle) {
      live.delete(handle);
      systemClock.clearTimeout(handle);
    },
  };
  const bus = new EventBus({
    transports: { memory: new MemoryBroker({ clock }) },
    clock,
    logger: createLogger({ level: "warn" }),
  });
  let handled = 0;
  await bus.add(handler(Order).handle(() => void handled++));
  await bus.start();
  const timers = live.size;
  await getPublisher(Order, { bus })({ id: ID, total: 1 });
  const stamps = startStampsOf(clock);
  assert.equal(stamps.waiting, 1);
  assert.equal(live.size, timers + 1, "the tick's timer");
  await bus.stop();
  assert.equal(handled, 1);
  assert.equal(stamps.waiting, 0);
  assert.equal(live.size, 0, "no timer left");
});
