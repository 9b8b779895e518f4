import assert from "node:assert/strict";
import { createLogger, Int, ManualClock, MemorySink } from "@fw/runtime";
import { topic } from "../topic.ts";
import { type MemoryRealtime, memoryRealtime } from "./memory_realtime.ts";
import { runRealtimeConformance } from "./conformance.ts";
import { RealtimeCursorError, type RealtimeGap, type RealtimeMessage } from "./realtime.ts";

const shared = new Map<string, MemoryRealtime>();
runRealtimeConformance("memoryRealtime", {
  create: (ns, { maxLen }) => {
    let broker = shared.get(ns);
    if (!broker) shared.set(ns, broker = memoryRealtime({ maxLen }));
    return broker;
  },
  cleanup: (namespaces) => void namespaces.forEach((ns) => shared.delete(ns)),
});

runRealtimeConformance("memoryRealtime live-only", {
  create: (ns) => {
    let broker = shared.get(ns);
    if (!broker) shared.set(ns, broker = memoryRealtime({ maxLen: 0 }));
    return broker;
  },
  cleanup: (namespaces) => void namespaces.forEach((ns) => shared.delete(ns)),
});

const Tick = topic("tick", { n: Int });
const n = (m: RealtimeMessage) => (m.payload as { n: number }).n;

Deno.test("memoryRealtime() drops retained messages older than replayTtlMs", async () => {
  const clock = new ManualClock(1_000);
  const broker = memoryRealtime({ replayTtlMs: 100, clock });
  const first = await broker.publish(Tick, { n: 1 });
  await clock.advance(60);
  const second = await broker.publish(Tick, { n: 2 });
  await clock.advance(60);
  await broker.publish(Tick, { n: 3 });
  await clock.advance(50); // now 1170: messages 1 (1000) and 2 (1060) are older than 100 ms
  const got: number[] = [], gaps: RealtimeGap[] = [];
  const late = await broker.subscribe(Tick, (m) => void got.push(n(m)), {
    from: first.id,
    onGap: (g) => void gaps.push(g),
  });
  assert.equal(late.recovered, false, "message 2 expired from the window");
  assert.deepEqual(gaps, [{ topic: "tick", after: first.id, reason: "trimmed" }]);
  const again: number[] = [];
  const ok = await broker.subscribe(Tick, (m) => void again.push(n(m)), { from: second.id });
  assert.equal(ok.recovered, true);
  assert.deepEqual(again, [3]);
  await broker.close();
});

Deno.test("memoryRealtime() treats an id of an earlier broker as trimmed, of a later one as unknown", async () => {
  const before = memoryRealtime({ clock: new ManualClock(1_000) });
  const old = await before.publish(Tick, { n: 1 });
  const after = memoryRealtime({ clock: new ManualClock(2_000) });
  const gaps: RealtimeGap[] = [];
  const sub = await after.subscribe(Tick, () => {}, { from: old.id, onGap: (g) => gaps.push(g) });
  assert.equal(sub.recovered, false);
  assert.equal(gaps[0].reason, "trimmed");
  const future = await after.publish(Tick, { n: 1 });
  await assert.rejects(before.subscribe(Tick, () => {}, { from: future.id }), RealtimeCursorError);
  await assert.rejects(
    after.subscribe(Tick, () => {}, { from: "2000-9" }),
    /Unknown realtime id "2000-9" for topic "tick": newer than the last id/,
  );
  await before.close();
  await after.close();
});

Deno.test("memoryRealtime() logs a throwing callback and refuses use after close()", async () => {
  const sink = new MemorySink();
  const broker = memoryRealtime({ logger: createLogger({ sink, level: "debug" }) });
  await broker.subscribe("t", () => {
    throw new Error("boom");
  });
  const m = await broker.publish("t", { any: "thing" });
  assert.equal(sink.records[0].message, "realtime subscriber failed");
  assert.equal(sink.records[0].fields.id, m.id);
  await broker.close();
  await assert.rejects(broker.publish("t", {}), /Realtime broker is closed/);
  await assert.rejects(broker.subscribe("t", () => {}), /Realtime broker is closed/);
});

Deno.test("memoryRealtime() rejects invalid options naming them", () => {
  assert.throws(() => memoryRealtime({ maxLen: -1 }), /Invalid option "maxLen"/);
  assert.throws(() => memoryRealtime({ replayTtlMs: 0 }), /Invalid option "replayTtlMs"/);
});
