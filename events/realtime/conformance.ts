/**
 * The realtime-broker conformance suite. Every realtime broker runs it from its test file, in a
 * few lines:
 *
 * ```ts ignore
 * runRealtimeConformance("memoryRealtime", {
 *   create: (ns, { maxLen }) => shared.get(ns) ?? shared.set(ns, memoryRealtime({ maxLen })).get(ns)!,
 * });
 * ```
 *
 * What it checks depends on `capabilities.replay`. Every broker: ids increasing in publish order,
 * topics kept apart, every subscriber gets every message in order (async callbacks awaited),
 * a throwing callback does not stop delivery, `close()` stops delivery, payloads validated
 * against a `Topic`, two instances on one namespace see each other's messages, and
 * `from: "latest"` gives `recovered: true` and no history. Replay brokers: resuming after an id
 * replays the rest with `recovered: true`; an id that fell out of the window gives
 * `recovered: false` and `onGap` with reason `"trimmed"`; an id never issued is refused with
 * `RealtimeCursorError`. Live-only brokers: an id gives `recovered: false` and live delivery.
 *
 * Ids are compared as sequences of decimal numbers (`1700000000000-3` before `1700000000000-10`),
 * the shape Redis stream ids, database sequences and the in-memory broker's ids share.
 *
 * @module
 */

import assert from "node:assert/strict";
import { Int, Optional, ValidationException } from "@fw/runtime";
import { topic } from "../topic.ts";
import {
  type RealtimeBroker,
  RealtimeCursorError,
  type RealtimeGap,
  type RealtimeMessage,
} from "./realtime.ts";

/** Options the suite asks a broker to be created with. */
export interface RealtimeHarnessOptions {
  /** Messages to retain per topic (replay brokers; live-only brokers ignore it). */
  readonly maxLen: number;
}

/** How the suite gets realtime brokers. */
export interface RealtimeHarness {
  /**
   * A broker on namespace `ns`. Two calls with the same `ns` stand for two processes sharing one
   * backend (each must see the other's messages); different namespaces must be isolated. The
   * suite closes every broker it gets (returning the same object twice is fine if `close()` may
   * be called twice).
   */
  create(ns: string, options: RealtimeHarnessOptions): RealtimeBroker | Promise<RealtimeBroker>;
  /** Called after each test with the namespaces it used (drop keys, close clients). */
  cleanup?(namespaces: readonly string[]): void | Promise<void>;
  /** How long to wait for an expected delivery, in ms (default 5000). */
  timeoutMs?: number;
}

const Tick = topic("conformance.tick", { n: Int, note: Optional(String) });
const Other = topic("conformance.other", { n: Int });

async function until(check: () => boolean, ms: number, what: string): Promise<void> {
  const end = Date.now() + ms;
  while (!check()) {
    if (Date.now() > end) throw new Error(`Timed out after ${ms} ms waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 5));
  }
}

const settle = (ms = 50) => new Promise((r) => setTimeout(r, ms));

/**
 * Compares two realtime ids as sequences of decimal numbers.
 *
 * @param a An id.
 * @param b Another id.
 * @returns Negative when `a` comes first, positive when `b` does, 0 when equal.
 */
export function compareRealtimeIds(a: string, b: string): number {
  const pa = a.match(/\d+/g)?.map(BigInt) ?? [], pb = b.match(/\d+/g)?.map(BigInt) ?? [];
  for (let i = 0; i < Math.max(pa.length, pb.length); i++) {
    const x = pa[i] ?? -1n, y = pb[i] ?? -1n;
    if (x !== y) return x < y ? -1 : 1;
  }
  return 0;
}

const ns = (m: RealtimeMessage) => (m.payload as { n: number }).n;

/**
 * Registers the realtime conformance tests with `Deno.test`.
 *
 * @param name Implementation name used in test names.
 * @param harness Creates brokers per namespace.
 */
export function runRealtimeConformance(name: string, harness: RealtimeHarness): void {
  const wait = harness.timeoutMs ?? 5000;
  let seq = 0;

  function test(what: string, fn: (env: Env) => Promise<void>): void {
    Deno.test({
      name: `${name} ${what}`,
      sanitizeOps: false,
      sanitizeResources: false,
      fn: async () => {
        const env = new Env(harness, `${name.replace(/\W/g, "")}-${Date.now()}-${++seq}`);
        try {
          await fn(env);
        } finally {
          await env.close();
        }
      },
    });
  }

  test("publishes with increasing ids and delivers id, topic and payload", async (env) => {
    const broker = await env.broker();
    const got: RealtimeMessage[] = [];
    await broker.subscribe(Tick, (m) => void got.push(m));
    const sent: RealtimeMessage[] = [];
    for (let n = 0; n < 12; n++) sent.push(await broker.publish(Tick, { n, note: `é ${n}` }));
    await until(() => got.length === 12, wait, "12 messages");
    for (let i = 1; i < sent.length; i++) {
      assert.ok(
        compareRealtimeIds(sent[i - 1].id, sent[i].id) < 0,
        `${sent[i - 1].id} < ${sent[i].id}`,
      );
    }
    assert.deepEqual(got.map((m) => m.id), sent.map((m) => m.id));
    assert.deepEqual(got.map(ns), [...Array(12).keys()]);
    assert.equal(got[3].topic, "conformance.tick");
    assert.deepEqual(got[3].payload, { n: 3, note: "é 3" });
    assert.deepEqual(sent[3], {
      id: sent[3].id,
      topic: "conformance.tick",
      payload: got[3].payload,
    });
  });

  test("keeps topics apart", async (env) => {
    const broker = await env.broker();
    const ticks: RealtimeMessage[] = [], others: RealtimeMessage[] = [];
    await broker.subscribe(Tick, (m) => void ticks.push(m));
    await broker.subscribe("conformance.other", (m) => void others.push(m));
    await broker.publish(Other, { n: 1 });
    await broker.publish(Tick, { n: 2 });
    await broker.publish("conformance.other", { n: 3 });
    await until(() => ticks.length === 1 && others.length === 2, wait, "both topics");
    await settle();
    assert.deepEqual(ticks.map(ns), [2]);
    assert.deepEqual(others.map(ns), [1, 3]);
    assert.ok(others.every((m) => m.topic === "conformance.other"));
  });

  test("gives every subscriber every message, in order, awaiting async callbacks", async (env) => {
    const broker = await env.broker();
    const seen: number[][] = [[], [], []];
    await broker.subscribe(Tick, (m) => void seen[0].push(ns(m)));
    await broker.subscribe(Tick, async (m) => {
      await new Promise((r) => setTimeout(r, ns(m) % 3 === 0 ? 5 : 0));
      seen[1].push(ns(m));
    });
    await broker.subscribe(Tick, (m) => void seen[2].push(ns(m)));
    for (let n = 0; n < 30; n++) await broker.publish(Tick, { n });
    await until(() => seen.every((s) => s.length === 30), wait, "30 messages for 3 subscribers");
    for (const s of seen) assert.deepEqual(s, [...Array(30).keys()]);
  });

  test("keeps delivering after a callback throws", async (env) => {
    const broker = await env.broker();
    const failing: number[] = [], healthy: number[] = [];
    await broker.subscribe(Tick, (m) => {
      failing.push(ns(m));
      if (ns(m) === 0) throw new Error("callback broke");
    });
    await broker.subscribe(Tick, async (m) => {
      healthy.push(ns(m));
      if (ns(m) === 1) await Promise.reject(new Error("async callback broke"));
    });
    for (let n = 0; n < 4; n++) await broker.publish(Tick, { n });
    await until(() => failing.length === 4 && healthy.length === 4, wait, "4 messages each");
    assert.deepEqual(failing, [0, 1, 2, 3]);
    assert.deepEqual(healthy, [0, 1, 2, 3]);
  });

  test("close() stops delivery to that subscription only", async (env) => {
    const broker = await env.broker();
    const closed: number[] = [], open: number[] = [];
    const sub = await broker.subscribe(Tick, (m) => void closed.push(ns(m)));
    await broker.subscribe(Tick, (m) => void open.push(ns(m)));
    await broker.publish(Tick, { n: 1 });
    await until(() => closed.length === 1 && open.length === 1, wait, "the first message");
    await sub.close();
    await sub.close();
    await broker.publish(Tick, { n: 2 });
    await until(() => open.length === 2, wait, "the second message");
    await settle();
    assert.deepEqual(closed, [1]);
    assert.deepEqual(open, [1, 2]);
  });

  test("validates the payload against a Topic and delivers nothing invalid", async (env) => {
    const broker = await env.broker();
    const got: number[] = [];
    await broker.subscribe(Tick, (m) => void got.push(ns(m)));
    await assert.rejects(
      broker.publish(Tick, { n: "one" }),
      (e: unknown) =>
        e instanceof ValidationException && /payload\.n must be an integer/.test(e.message),
    );
    await broker.publish(Tick, { n: 5 });
    await until(() => got.length === 1, wait, "the valid message");
    await settle();
    assert.deepEqual(got, [5]);
  });

  test("two instances on one namespace see each other's messages", async (env) => {
    const a = await env.broker(), b = await env.broker();
    const onA: number[] = [], onB: number[] = [];
    await a.subscribe(Tick, (m) => void onA.push(ns(m)));
    await b.subscribe(Tick, (m) => void onB.push(ns(m)));
    await a.publish(Tick, { n: 1 });
    await b.publish(Tick, { n: 2 });
    await until(() => onA.length === 2 && onB.length === 2, wait, "both instances");
    assert.deepEqual(onA, [1, 2]);
    assert.deepEqual(onB, [1, 2]);
  });

  test("from latest: recovered true and no history", async (env) => {
    const broker = await env.broker();
    await broker.publish(Tick, { n: 1 });
    const got: number[] = [];
    const sub = await broker.subscribe(Tick, (m) => void got.push(ns(m)), { from: "latest" });
    assert.equal(sub.recovered, true);
    await broker.publish(Tick, { n: 2 });
    await until(() => got.length === 1, wait, "the live message");
    await settle();
    assert.deepEqual(got, [2]);
  });

  test("replay: resumes after an id with recovered true and no gap", async (env) => {
    const broker = await env.broker();
    if (!broker.capabilities.replay) return;
    const ids: string[] = [];
    for (let n = 0; n < 5; n++) ids.push((await broker.publish(Tick, { n })).id);
    const got: number[] = [], gaps: RealtimeGap[] = [];
    const other = await env.broker();
    const sub = await other.subscribe(Tick, (m) => void got.push(ns(m)), {
      from: ids[1],
      onGap: (g) => void gaps.push(g),
    });
    assert.equal(sub.recovered, true);
    await broker.publish(Tick, { n: 5 });
    await until(() => got.length === 4, wait, "3 replayed and 1 live message");
    await settle();
    assert.deepEqual(got, [2, 3, 4, 5]);
    assert.deepEqual(gaps, []);
    const atEnd: number[] = [];
    const last = await broker.subscribe(Tick, (m) => void atEnd.push(ns(m)), { from: ids[4] });
    assert.equal(last.recovered, true);
    await settle();
    assert.deepEqual(atEnd, [5], "resuming from the last-but-one id replays only the last");
  });

  test("replay: a trimmed id gives recovered false and onGap, then live delivery", async (env) => {
    const broker = await env.broker({ maxLen: 10 });
    if (!broker.capabilities.replay) return;
    const first = await broker.publish(Tick, { n: 0 });
    for (let n = 1; n < 300; n++) await broker.publish(Tick, { n });
    const got: number[] = [], gaps: RealtimeGap[] = [];
    const sub = await broker.subscribe(Tick, (m) => void got.push(ns(m)), {
      from: first.id,
      onGap: (g) => void gaps.push(g),
    });
    assert.equal(sub.recovered, false);
    assert.deepEqual(gaps, [{ topic: "conformance.tick", after: first.id, reason: "trimmed" }]);
    await broker.publish(Tick, { n: 300 });
    await until(() => got.includes(300), wait, "the live message after the gap");
    assert.ok(!got.includes(1), "a message trimmed from the window is not delivered");
  });

  test("replay: an id never issued is refused with RealtimeCursorError", async (env) => {
    const broker = await env.broker();
    if (!broker.capabilities.replay) return;
    await broker.publish(Tick, { n: 0 });
    await assert.rejects(
      broker.subscribe(Tick, () => {}, { from: "not-an-id" }),
      (e: unknown) =>
        e instanceof RealtimeCursorError && e.id === "not-an-id" &&
        e.topic === "conformance.tick",
    );
    const got: number[] = [];
    await broker.subscribe(Tick, (m) => void got.push(ns(m)));
    await broker.publish(Tick, { n: 1 });
    await until(() => got.length === 1, wait, "delivery after the refusal");
  });

  test("live-only: an id gives recovered false and live delivery", async (env) => {
    const broker = await env.broker();
    if (broker.capabilities.replay) return;
    const earlier = await broker.publish(Tick, { n: 0 });
    await broker.publish(Tick, { n: 1 });
    const got: number[] = [];
    const sub = await broker.subscribe(Tick, (m) => void got.push(ns(m)), { from: earlier.id });
    assert.equal(sub.recovered, false);
    await broker.publish(Tick, { n: 2 });
    await until(() => got.length === 1, wait, "the live message");
    await settle();
    assert.deepEqual(got, [2]);
  });
}

class Env {
  readonly #brokers: RealtimeBroker[] = [];
  constructor(readonly harness: RealtimeHarness, readonly ns: string) {}

  async broker(options: RealtimeHarnessOptions = { maxLen: 1000 }): Promise<RealtimeBroker> {
    const broker = await this.harness.create(this.ns, options);
    this.#brokers.push(broker);
    return broker;
  }

  async close(): Promise<void> {
    for (const broker of new Set(this.#brokers)) await broker.close();
    await this.harness.cleanup?.([this.ns]);
  }
}
