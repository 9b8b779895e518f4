import assert from "node:assert/strict";
import {
  createLogger,
  type Logger,
  ManualClock,
  MemoryMeter,
  MemorySink,
  provider,
  useContext,
} from "@fw/runtime";
import { MemoryBroker } from "../transports/memory_broker.ts";
import { schedule } from "./schedule.ts";
import { Scheduler, type SchedulerOptions } from "./scheduler.ts";
import { MemoryScheduleStore } from "./store.ts";
import type { ScheduleContext, ScheduleDefinition, ScheduleRun } from "./schedule_types.ts";

const T0 = Date.UTC(2030, 0, 1); // a Tuesday, 00:00:00 UTC

interface Rig {
  clock: ManualClock;
  meter: MemoryMeter;
  sink: MemorySink;
  logger: Logger;
  broker: MemoryBroker;
  make(defs: ScheduleDefinition[], extra?: Partial<SchedulerOptions>): Promise<Scheduler>;
  stop(): Promise<void>;
}

function rig(start = T0): Rig {
  const clock = new ManualClock(start);
  const meter = new MemoryMeter();
  const sink = new MemorySink();
  const logger = createLogger({ sink, level: "debug", clock: () => clock.now() });
  const broker = new MemoryBroker({ clock });
  const made: Scheduler[] = [];
  return {
    clock,
    meter,
    sink,
    logger,
    broker,
    async make(defs, extra = {}) {
      const s = new Scheduler({
        transports: { memory: broker },
        clock,
        meter,
        logger,
        random: () => 0.5,
        ...extra,
      });
      for (const d of defs) s.add(d);
      await s.start();
      made.push(s);
      return s;
    },
    async stop() {
      for (const s of made) await s.stop();
    },
  };
}

const iso = (ms: number) => new Date(ms).toISOString();
const runsOf = (sink: MemorySink) =>
  sink.records.filter((r) => r.message === "schedule run").map((r) =>
    r.fields.schedule as { scheduledAt: string; attempt: number; outcome: string; error?: string }
  );

Deno.test("schedule() checks its name and options when it is defined, naming the option", () => {
  assert.throws(() => schedule(""), /Invalid schedule\(\) name/);
  assert.throws(() => schedule("a b"), /Invalid schedule\(\) name "a b"/);
  const s = schedule("job");
  assert.throws(() => s.options({ cron: "* * *" }), /option "cron" for schedule "job"/);
  assert.throws(() => s.options({ cron: 5 as unknown as string }), /option "cron"/);
  assert.throws(() => s.options({ cron: "* * * * *", timezone: "Mars/Base" }), /"timezone".*Mars/);
  assert.throws(() => s.options({ overlap: "queue" as "skip" }), /"overlap".*"skip" or "allow"/);
  assert.throws(() => s.options({ catchUp: "all" as "none" }), /"catchUp"/);
  assert.throws(() => s.options({ maxRetries: -1 }), /"maxRetries".*integer >= 0/);
  assert.throws(() => s.options({ lease: 10 }), /"lease".*integer >= 1000/);
  assert.throws(() => s.options({ jitter: 2 }), /"jitter"/);
  assert.throws(() => s.options({ cronn: "x" } as never), /Unknown schedule option "cronn"/);
  assert.throws(() => s.handle(() => {}), /Missing schedule option "cron" for schedule "job"/);
  assert.throws(
    () => s.options({ cron: "* * * * *" }).handle("x" as never),
    /Invalid .handle\(\) argument/,
  );
  const def = s.options({ cron: "0 6 * * *" }).options({ timezone: "Europe/Berlin" }).handle(
    () => {},
  );
  assert.equal(def.options.cron, "0 6 * * *");
  assert.equal(def.options.timezone, "Europe/Berlin");
  assert.equal(def.options.overlap, "skip");
  assert.equal(def.options.catchUp, "none");
  assert.equal(schedule("d").options({ cron: "@daily" }).handle(() => {}).options.cron, "@daily");
});

Deno.test("Scheduler.start() fails on a cron field croner rejects, naming the schedule and option", async () => {
  const r = rig();
  const bad = schedule("bad").options({ cron: "61 * * * *" }).handle(() => {});
  await assert.rejects(() => r.make([bad]), (err: Error) => {
    assert.ok(err instanceof TypeError);
    assert.match(
      err.message,
      /Invalid schedule option "cron" for schedule "bad": "61 \* \* \* \*"/,
    );
    assert.match(err.message, /minute/);
    return true;
  });
});

Deno.test("Scheduler.add() refuses duplicate names and transports without schedule state", () => {
  const r = rig();
  const s = new Scheduler({ transports: { memory: r.broker } });
  const def = schedule("dup").options({ cron: "* * * * *" }).handle(() => {});
  s.add(def, "events/a.on.ts#a");
  assert.throws(() => s.add(def, "events/b.on.ts#b"), /Duplicate schedule name "dup"/);
  const two = new Scheduler({ transports: { a: r.broker, b: new MemoryBroker() } });
  assert.throws(
    () => two.add(schedule("x").options({ cron: "* * * * *" }).handle(() => {})),
    /needs a "transport" option/,
  );
  assert.throws(
    () => two.add(schedule("y").options({ cron: "* * * * *", transport: "c" }).handle(() => {})),
    /"transport".*"c" is not a key/,
  );
  const plain = { ...r.broker, name: "plain", scheduleStore: undefined };
  const none = new Scheduler({ transports: { plain: plain as unknown as MemoryBroker } });
  assert.throws(
    () => none.add(schedule("z").options({ cron: "* * * * *" }).handle(() => {})),
    /cannot run on transport "plain".*keeps no schedule state/,
  );
});

Deno.test("a schedule runs at each tick with scheduledAt, attempt, context and metrics", async () => {
  const r = rig();
  const seen: Array<{ run: ScheduleRun; ctx: ScheduleContext }> = [];
  await r.make([
    schedule("every10").options({ cron: "*/10 * * * * *" }).handle((run) => {
      seen.push({ run, ctx: useContext<ScheduleContext>() });
    }),
  ]);
  await r.clock.advance(9_999);
  assert.equal(seen.length, 0);
  await r.clock.advance(20_001);
  await r.stop();
  assert.deepEqual(seen.map((s) => iso(s.run.scheduledAt.getTime())), [
    iso(T0 + 10_000),
    iso(T0 + 20_000),
    iso(T0 + 30_000),
  ]);
  assert.deepEqual(seen.map((s) => s.run.attempt), [1, 1, 1]);
  assert.equal(seen[0].ctx.scheduleName, "every10");
  assert.equal(seen[0].ctx.traceId, seen[0].run.traceId);
  assert.match(seen[0].run.traceId, /^[0-9a-f]{32}$/);
  assert.notEqual(seen[0].run.traceId, seen[1].run.traceId);
  assert.equal(r.meter.sum("events.schedule.every10.run"), 3);
  assert.equal(r.meter.sum("events.schedule.every10.failure"), 0);
  assert.equal(r.meter.count("events.schedule.every10.duration"), 3);
  const lines = r.sink.records.filter((l) => l.message === "schedule run");
  assert.equal(lines.length, 3);
  assert.equal(lines[0].level, "info");
  assert.equal(lines[0].fields.traceId, seen[0].run.traceId);
  assert.deepEqual(lines[0].fields.schedule, {
    name: "every10",
    scheduledAt: iso(T0 + 10_000),
    attempt: 1,
    outcome: "ok",
    duration: 0,
  });
});

Deno.test("a schedule reads its cron expression in its time zone", async () => {
  // 06:00 in Berlin is 05:00 UTC in January.
  const r = rig();
  const at: string[] = [];
  await r.make([
    schedule("berlin").options({ cron: "0 6 * * *", timezone: "Europe/Berlin" })
      .handle((run) => void at.push(run.scheduledAt.toISOString())),
  ]);
  await r.clock.advance(2 * 86_400_000);
  await r.stop();
  assert.deepEqual(at, ["2030-01-01T05:00:00.000Z", "2030-01-02T05:00:00.000Z"]);
});

Deno.test("several schedulers on one broker run each tick once", async () => {
  const r = rig();
  const runs: string[] = [];
  const def = schedule("shared").options({ cron: "* * * * * *" })
    .handle((run) => void runs.push(iso(run.scheduledAt.getTime())));
  await r.make([def]);
  await r.make([def]);
  await r.make([def]);
  await r.clock.advance(5_000);
  await r.stop();
  assert.deepEqual(runs, [1, 2, 3, 4, 5].map((s) => iso(T0 + s * 1000)));
});

Deno.test('overlap "skip" skips ticks while a run is in progress; "allow" runs them', async () => {
  for (const overlap of ["skip", "allow"] as const) {
    const r = rig();
    const started: number[] = [];
    await r.make([
      schedule("slow").options({ cron: "*/10 * * * * *", overlap }).handle(async (run) => {
        started.push((run.scheduledAt.getTime() - T0) / 1000);
        await new Promise<void>((resolve) => r.clock.setTimeout(resolve, 25_000));
      }),
    ]);
    await r.clock.advance(45_000);
    await r.clock.advance(60_000);
    // stop() waits for the run in progress, which ends when the clock moves on.
    const stopped = r.stop();
    await r.clock.advance(30_000);
    await stopped;
    if (overlap === "skip") {
      assert.deepEqual(started.slice(0, 3), [10, 40, 70]);
      assert.ok(r.meter.sum("events.schedule.slow.skipped") >= 4);
      const skipped = runsOf(r.sink).filter((l) => l.outcome === "skipped");
      assert.deepEqual(skipped.slice(0, 2).map((l) => l.scheduledAt), [
        iso(T0 + 20_000),
        iso(T0 + 30_000),
      ]);
    } else {
      assert.deepEqual(started.slice(0, 4), [10, 20, 30, 40]);
      assert.equal(r.meter.sum("events.schedule.slow.skipped"), 0);
    }
  }
});

Deno.test("a failed run is retried with back-off, same tick and trace id, up to maxRetries", async () => {
  const r = rig();
  const attempts: Array<[number, number, string]> = [];
  await r.make([
    schedule("flaky").options({ cron: "0 * * * *", maxRetries: 2, jitter: 0 }).handle((run) => {
      attempts.push([r.clock.now() - T0, run.attempt, run.traceId]);
      throw new Error("boom");
    }),
  ]);
  await r.clock.advance(3_600_000 + 10_000);
  await r.stop();
  // Tick at 1 h; retries after 1 s and 2 s.
  assert.deepEqual(attempts.map(([t, a]) => [t, a]), [
    [3_600_000, 1],
    [3_601_000, 2],
    [3_603_000, 3],
  ]);
  assert.equal(new Set(attempts.map(([, , id]) => id)).size, 1);
  assert.deepEqual(runsOf(r.sink).map((l) => [l.attempt, l.outcome, l.error]), [
    [1, "retry", "boom"],
    [2, "retry", "boom"],
    [3, "failed", "boom"],
  ]);
  assert.equal(r.meter.sum("events.schedule.flaky.run"), 3);
  assert.equal(r.meter.sum("events.schedule.flaky.failure"), 3);
  const stored = await r.broker.scheduleStore().read("flaky");
  assert.deepEqual(stored?.record.last, {
    tick: T0 + 3_600_000,
    outcome: "failed",
    attempts: 3,
    at: T0 + 3_603_000,
  });
  assert.deepEqual(stored?.record.runs, []);
});

Deno.test("a run that passes its timeout fails, aborts its signal and is retried", async () => {
  const r = rig();
  const signals: AbortSignal[] = [];
  await r.make([
    schedule("stuck").options({ cron: "0 * * * *", timeout: 5_000, maxRetries: 1, jitter: 0 })
      .handle((run) => {
        signals.push(run.signal);
        return run.attempt === 1 ? new Promise(() => {}) : undefined;
      }),
  ]);
  await r.clock.advance(3_600_000 + 7_000);
  await r.stop();
  assert.equal(signals.length, 2);
  assert.equal(signals[0].aborted, true);
  assert.equal((signals[0].reason as Error).name, "TimeoutError");
  assert.deepEqual(runsOf(r.sink).map((l) => [l.attempt, l.outcome]), [[1, "retry"], [2, "ok"]]);
});

Deno.test("catchUp: latest runs the latest missed tick at start-up; none waits for the next", async () => {
  for (const catchUp of ["latest", "none"] as const) {
    const r = rig();
    const store = r.broker.scheduleStore();
    // The schedule last ran at T0 + 10 s; every instance then stopped until T0 + 35 s.
    await store.write("report", { since: T0, tick: T0 + 10_000, runs: [] }, undefined);
    await r.clock.advance(35_000);
    const at: number[] = [];
    await r.make([
      schedule("report").options({ cron: "*/10 * * * * *", catchUp })
        .handle((run) => void at.push(run.scheduledAt.getTime() - T0)),
    ]);
    await r.clock.advance(0);
    const first = [...at];
    await r.clock.advance(5_000);
    await r.stop();
    assert.deepEqual(first, catchUp === "latest" ? [30_000] : []);
    assert.deepEqual(at, catchUp === "latest" ? [30_000, 40_000] : [40_000]);
  }
});

Deno.test("catchUp: latest does nothing for a schedule seen for the first time", async () => {
  const r = rig(T0 + 35_000);
  const at: number[] = [];
  await r.make([
    schedule("fresh").options({ cron: "*/10 * * * * *", catchUp: "latest" })
      .handle((run) => void at.push(run.scheduledAt.getTime() - T0)),
  ]);
  await r.clock.advance(5_000);
  await r.stop();
  assert.deepEqual(at, [40_000]);
});

Deno.test("a run whose instance stopped renewing is taken over after its lease, as the next attempt", async () => {
  const r = rig();
  const store = r.broker.scheduleStore();
  // Another instance claimed the tick at T0 and died: its lease runs until T0 + 15 s.
  await store.write("job", {
    since: T0 - 60_000,
    tick: T0,
    runs: [{ tick: T0, attempt: 1, traceId: "a".repeat(32), owner: "dead", until: T0 + 15_000 }],
  }, undefined);
  const seen: Array<[number, number, string]> = [];
  await r.make([
    schedule("job").options({ cron: "0 * * * *" }).handle((run) => {
      seen.push([r.clock.now() - T0, run.attempt, run.traceId]);
    }),
  ]);
  await r.clock.advance(14_000);
  assert.deepEqual(seen, []);
  await r.clock.advance(2_000);
  await r.stop();
  assert.deepEqual(seen, [[15_000, 2, "a".repeat(32)]]);
  assert.equal((await store.read("job"))?.record.last?.outcome, "ok");
});

Deno.test("a run taken over after its last attempt fails for good, counted and logged", async () => {
  const r = rig();
  const store = new MemoryScheduleStore();
  await store.write("job", {
    since: T0 - 60_000,
    tick: T0,
    runs: [{ tick: T0, attempt: 1, traceId: "b".repeat(32), owner: "dead", until: T0 + 15_000 }],
  }, undefined);
  const broker = Object.assign(new MemoryBroker({ clock: r.clock }), {
    scheduleStore: () => store,
  });
  let ran = 0;
  await r.make(
    [schedule("job").options({ cron: "0 * * * *", maxRetries: 0 }).handle(() => void ran++)],
    { transports: { memory: broker } },
  );
  await r.clock.advance(16_000);
  await r.stop();
  assert.equal(ran, 0);
  assert.equal(r.meter.sum("events.schedule.job.failure"), 1);
  const [line] = runsOf(r.sink);
  assert.equal(line.outcome, "failed");
  assert.match(line.error!, /stopped renewing its lease/);
  assert.equal((await store.read("job"))?.record.last?.outcome, "failed");
});

Deno.test("a long run renews its lease, so no other instance takes it over", async () => {
  const r = rig();
  let runs = 0;
  const def = schedule("long").options({ cron: "0 * * * *", lease: 3_000 }).handle(async () => {
    runs++;
    await new Promise<void>((resolve) => r.clock.setTimeout(resolve, 20_000));
  });
  await r.make([def]);
  await r.make([def]);
  await r.clock.advance(3_600_000 + 30_000);
  await r.stop();
  assert.equal(runs, 1);
  assert.deepEqual(runsOf(r.sink).map((l) => [l.attempt, l.outcome]), [[1, "ok"]]);
});

Deno.test("an injecting schedule gets its providers from a scope per run", async () => {
  const r = rig();
  let made = 0;
  let disposed = 0;
  const counter = provider({
    name: "Counter",
    lifetime: "scoped",
    factory: () => ({ id: ++made }),
    dispose: () => void disposed++,
  });
  const ids: number[] = [];
  await r.make([
    schedule("inj").options({ cron: "*/10 * * * * *" }).inject({ counter })
      .handle(({ counter }, run) => {
        assert.equal(run.name, "inj");
        ids.push(counter.id);
      }),
  ]);
  await r.clock.advance(20_000);
  await r.stop();
  assert.deepEqual(ids, [1, 2]);
  assert.equal(disposed, 2);
});

/** A store that rejects every call while `down` is set. */
class FlakyStore extends MemoryScheduleStore {
  down = false;
  override read(name: string) {
    return this.down ? Promise.reject(new Error("engine down")) : super.read(name);
  }
  override write(...args: Parameters<MemoryScheduleStore["write"]>) {
    return this.down ? Promise.reject(new Error("engine down")) : super.write(...args);
  }
}

Deno.test("while the engine fails, the tick waits and the outcome is written once it answers", async () => {
  const r = rig();
  const store = new FlakyStore();
  const broker = Object.assign(new MemoryBroker({ clock: r.clock }), {
    scheduleStore: () => store,
  });
  const ran: Array<[number, number]> = [];
  await r.make(
    [
      schedule("hourly").options({ cron: "0 * * * *" }).handle((run) => {
        ran.push([r.clock.now() - T0, run.scheduledAt.getTime() - T0]);
        // The engine goes down while the run is in progress, for 2.5 s.
        store.down = true;
        r.clock.setTimeout(() => store.down = false, 2_500);
      }),
    ],
    { transports: { memory: broker } },
  );
  store.down = true;
  await r.clock.advance(3_600_000);
  r.clock.setTimeout(() => store.down = false, 2_500);
  await r.clock.advance(10_000);
  await r.stop();
  // Claimed at the first wake-up after the engine came back, for the 1 h tick.
  assert.deepEqual(ran, [[3_603_000, 3_600_000]]);
  const stored = await store.read("hourly");
  assert.deepEqual(stored?.record.runs, []);
  assert.equal(stored?.record.last?.outcome, "ok");
  const errors = r.sink.records.filter((l) => l.level === "error").map((l) => l.message);
  assert.ok(errors.includes("schedule state could not be read or written; trying again"));
  assert.ok(errors.includes("schedule state could not be read or written"));
  assert.deepEqual(runsOf(r.sink).map((l) => l.outcome), ["ok"]);
});

/** A clock whose timers fire late, like a busy event loop. */
class LateClock extends ManualClock {
  override setTimeout(fn: () => void, ms: number) {
    return super.setTimeout(fn, ms + 2_500);
  }
}

Deno.test("ticks that came while the instance was late still run, each once, in order", async () => {
  const clock = new LateClock(T0);
  const r = rig();
  const at: number[] = [];
  await r.make(
    [
      schedule("late").options({ cron: "* * * * * *", overlap: "allow" })
        .handle((run) => void at.push((run.scheduledAt.getTime() - T0) / 1000)),
    ],
    { clock, transports: { memory: new MemoryBroker({ clock }) } },
  );
  await clock.advance(10_000);
  await r.stop();
  // Wake-ups at 3.5 s, 6.5 s and 9.5 s each find three ticks due.
  assert.deepEqual(at, [1, 2, 3, 4, 5, 6, 7, 8, 9]);
});

Deno.test("a run whose outcome could not be written before its lease ended runs again, here too", async () => {
  const r = rig();
  const store = new FlakyStore();
  const broker = Object.assign(new MemoryBroker({ clock: r.clock }), {
    scheduleStore: () => store,
  });
  const attempts: number[] = [];
  await r.make(
    [
      schedule("solo").options({ cron: "0 * * * *", lease: 3_000 }).handle((run) => {
        attempts.push(run.attempt);
        if (run.attempt === 1) {
          // The engine is down for longer than the lease: the outcome is never written.
          store.down = true;
          r.clock.setTimeout(() => store.down = false, 10_000);
        }
      }),
    ],
    { transports: { memory: broker } },
  );
  await r.clock.advance(3_600_000 + 20_000);
  await r.stop();
  // The one instance takes its own stale run over (at least once), and the schedule goes on.
  assert.deepEqual(attempts, [1, 2]);
  const stored = await store.read("solo");
  assert.deepEqual(stored?.record.runs, []);
  assert.equal(stored?.record.last?.outcome, "ok");
});

Deno.test("Scheduler.status() reports each schedule's next tick, last finished run, runs in progress and its last error here", async () => {
  const r = rig();
  let fail = true;
  const s = new Scheduler({ transports: { memory: r.broker }, clock: r.clock, logger: r.logger });
  s.add(
    schedule("flaky").options({ cron: "*/10 * * * * *", maxRetries: 1, jitter: 0 }).handle(() => {
      if (fail) throw new Error("database locked");
    }),
  );
  const before = await s.status();
  assert.deepEqual(before, [{
    name: "flaky",
    cron: "*/10 * * * * *",
    timezone: "UTC",
    transport: "memory",
    runningHere: 0,
  }]);
  await s.start();
  await r.clock.advance(10_000); // attempt 1 fails: its retry is due in 1 s
  let [st] = await s.status();
  assert.equal(st.next, T0 + 20_000);
  assert.equal(st.record?.runs.length, 1); // waiting for its retry
  assert.equal(st.record?.last, undefined);
  await r.clock.advance(1_000); // attempt 2 fails too: the run failed
  [st] = await s.status();
  assert.deepEqual(st.record?.last, {
    tick: T0 + 10_000,
    outcome: "failed",
    attempts: 2,
    at: T0 + 11_000,
  });
  assert.deepEqual(st.lastError, { tick: T0 + 10_000, attempt: 2, message: "database locked" });
  assert.equal(st.record?.runs.length, 0);
  fail = false;
  await r.clock.advance(9_000);
  [st] = await s.status();
  assert.deepEqual([st.record?.last?.tick, st.record?.last?.outcome], [T0 + 20_000, "ok"]);
  assert.equal(st.next, T0 + 30_000);
  await s.stop();
});
