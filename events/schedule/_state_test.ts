import assert from "node:assert/strict";
import { renew, settle, step, type StepInput } from "./_state.ts";
import type { RunRecord, ScheduleRecord } from "./store.ts";

const input = (patch: Partial<StepInput> = {}): StepInput => ({
  now: 10_000,
  instance: "me",
  overlap: "skip",
  maxRetries: 2,
  lease: 1000,
  traceId: "t",
  running: () => false,
  ...patch,
});
const run = (patch: Partial<RunRecord> = {}): RunRecord => ({
  tick: 9000,
  attempt: 1,
  traceId: "r",
  owner: "other",
  until: 10_500,
  ...patch,
});

Deno.test("step() creates the record on first sight and changes nothing when nothing is due", () => {
  const first = step(undefined, input());
  assert.deepEqual(first.record, { since: 10_000, runs: [] });
  const again = step(first.record, input());
  assert.equal(again.record, undefined);
  assert.deepEqual(again.start, []);
});

Deno.test("step() claims a tick once: a second claim of the same or an older tick is taken", () => {
  const claimed = step({ since: 0, runs: [] }, input({ tick: 10_000 }));
  assert.equal(claimed.record?.tick, 10_000);
  assert.deepEqual(claimed.start, [
    { tick: 10_000, attempt: 1, traceId: "t", owner: "me", until: 11_000 },
  ]);
  const other = step(claimed.record, input({ tick: 10_000, instance: "b" }));
  assert.equal(other.record, undefined);
  assert.deepEqual(other.start, []);
  assert.equal(step(claimed.record, input({ tick: 9000, instance: "b" })).record, undefined);
});

Deno.test('step() skips a tick while a run is in progress with overlap "skip", runs it with "allow"', () => {
  const busy: ScheduleRecord = { since: 0, tick: 9000, runs: [run()] };
  const skipped = step(busy, input({ tick: 10_000 }));
  assert.equal(skipped.skipped, 10_000);
  assert.equal(skipped.record?.tick, 10_000);
  assert.equal(skipped.record?.runs.length, 1);
  const allowed = step(busy, input({ tick: 10_000, overlap: "allow" }));
  assert.equal(allowed.skipped, undefined);
  assert.equal(allowed.record?.runs.length, 2);
  // A run waiting for its retry is in progress too.
  const waiting: ScheduleRecord = { since: 0, runs: [run({ owner: undefined, until: 20_000 })] };
  assert.equal(step(waiting, input({ tick: 10_000 })).skipped, 10_000);
});

Deno.test("step() takes over an expired lease as the next attempt, or gives it up after the last", () => {
  const expired: ScheduleRecord = { since: 0, tick: 9000, runs: [run({ until: 9500 })] };
  const taken = step(expired, input());
  assert.deepEqual(taken.start, [{ ...run(), attempt: 2, owner: "me", until: 11_000 }]);
  const last: ScheduleRecord = { since: 0, tick: 9000, runs: [run({ attempt: 3, until: 9500 })] };
  const given = step(last, input());
  assert.deepEqual(given.start, []);
  assert.equal(given.abandoned.length, 1);
  assert.deepEqual(given.record?.runs, []);
  assert.deepEqual(given.record?.last, { tick: 9000, outcome: "failed", attempts: 3, at: 10_000 });
});

Deno.test("step() keeps this instance's running runs, and claims due retries with attempt + 1", () => {
  const mine = run({ owner: "me", until: 9500 });
  const kept = step({ since: 0, runs: [mine] }, input({ running: () => true }));
  assert.equal(kept.record, undefined);
  const due = run({ owner: undefined, until: 10_000, attempt: 2 });
  const retried = step({ since: 0, runs: [due] }, input());
  assert.deepEqual(retried.start, [{ ...due, attempt: 3, owner: "me", until: 11_000 }]);
});

Deno.test("settle() and renew() change only the run this instance still holds", () => {
  const mine = run({ owner: "me" });
  const record: ScheduleRecord = { since: 0, tick: 9000, runs: [mine] };
  assert.equal(renew(record, mine, "me", 12_000)?.runs[0].until, 12_000);
  assert.equal(renew(record, mine, "b", 12_000), undefined);
  assert.equal(renew(record, { ...mine, attempt: 2 }, "me", 12_000), undefined);
  const retry = settle(record, mine, "me", { ok: false, retryAt: 11_000 }, 10_000);
  assert.deepEqual(retry?.runs, [{ tick: 9000, attempt: 1, traceId: "r", until: 11_000 }]);
  const done = settle(record, mine, "me", { ok: true }, 10_000);
  assert.deepEqual(done?.runs, []);
  assert.deepEqual(done?.last, { tick: 9000, outcome: "ok", attempts: 1, at: 10_000 });
  assert.equal(settle(record, mine, "b", { ok: true }, 10_000), undefined);
});
