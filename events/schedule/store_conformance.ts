/**
 * The conformance suite of {@linkcode ScheduleStore}: what the scheduler relies on, checked
 * against a real engine. Each transport's schedule test runs it in a few lines.
 *
 * @module
 */

import assert from "node:assert/strict";
import type { ScheduleRecord, ScheduleStore } from "./store.ts";

/** A store opened by the harness, with what closes it. */
export interface OpenedScheduleStore {
  /** The store. */
  readonly store: ScheduleStore;
  /** Closes its connection (the transport or client that made it). */
  close(): Promise<void>;
}

/** How the suite gets stores. */
export interface ScheduleStoreHarness {
  /** A store on a namespace, as another process would open it (called twice per test). */
  open(namespace: string): OpenedScheduleStore | Promise<OpenedScheduleStore>;
  /** Removes what a test left in the engine, after its stores were closed. */
  cleanup?(namespace: string): Promise<void>;
}

const record = (tick?: number): ScheduleRecord => ({
  since: 1000,
  ...(tick !== undefined ? { tick } : {}),
  runs: [{ tick: tick ?? 0, attempt: 1, traceId: "t".repeat(32), owner: "i", until: 5 }],
});

/**
 * Registers the suite's tests.
 *
 * @param name Label of the store under test.
 * @param harness Creates and cleans up stores.
 */
export function runScheduleStoreConformance(name: string, harness: ScheduleStoreHarness): void {
  const test = (what: string, fn: (a: ScheduleStore, b: ScheduleStore) => Promise<void>) =>
    Deno.test(`${name}: ${what}`, async () => {
      const ns = `s${crypto.randomUUID().slice(0, 8)}`;
      const opened: OpenedScheduleStore[] = [];
      try {
        opened.push(await harness.open(ns), await harness.open(ns));
        await fn(opened[0].store, opened[1].store);
      } finally {
        for (const o of opened) await o.close();
        await harness.cleanup?.(ns);
      }
    });

  test("read() of a schedule never written is undefined", async (a) => {
    assert.equal(await a.read("none"), undefined);
  });

  test("only one of two first writes succeeds, and both stores read it", async (a, b) => {
    const [x, y] = await Promise.all([
      a.write("job", record(1), undefined),
      b.write("job", record(2), undefined),
    ]);
    assert.equal(Number(x) + Number(y), 1);
    const read = await b.read("job");
    assert.deepEqual(read?.record, record(x ? 1 : 2));
    assert.deepEqual((await a.read("job"))?.record, read?.record);
  });

  test("a write succeeds only from the current version", async (a, b) => {
    assert.equal(await a.write("job", record(1), undefined), true);
    const v1 = (await a.read("job"))!.version;
    assert.equal(await b.write("job", record(2), v1), true);
    assert.equal(await a.write("job", record(3), v1), false, "stale version");
    assert.equal(await a.write("job", record(3), undefined), false, "exists already");
    const now = await a.read("job");
    assert.deepEqual(now?.record, record(2));
    assert.notEqual(now?.version, v1);
    assert.equal(await a.write("job", record(4), now!.version), true);
  });

  test("of many writes from one version, exactly one succeeds", async (a, b) => {
    await a.write("race", record(0), undefined);
    const v = (await a.read("race"))!.version;
    const results = await Promise.all(
      Array.from({ length: 10 }, (_, i) => (i % 2 ? a : b).write("race", record(i + 1), v)),
    );
    assert.equal(results.filter(Boolean).length, 1);
    const won = results.indexOf(true);
    assert.deepEqual((await b.read("race"))?.record, record(won + 1));
  });

  test("schedules are independent", async (a) => {
    assert.equal(await a.write("one", record(1), undefined), true);
    assert.equal(await a.write("two", record(2), undefined), true);
    assert.deepEqual((await a.read("one"))?.record, record(1));
    assert.deepEqual((await a.read("two"))?.record, record(2));
  });
}
