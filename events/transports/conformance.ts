/**
 * The transport conformance suite. Every transport runs it from its test file, in a few lines:
 *
 * ```ts ignore
 * runTransportConformance("MemoryBroker", { create: (ns) => brokers.get(ns) });
 * ```
 *
 * It drives real handlers through an {@linkcode EventBus}, so it checks the transport and the
 * shared delivery policy together: publish/subscribe, groups, competing vs broadcast, retries
 * and dead letters, manual ack, ordering by key where declared, no loss across a subscriber
 * restart, concurrent publishers and malformed envelopes, and delayed delivery
 * (`delay_conformance.ts`). It uses real time with short back-off
 * (`maxBackoff: 20`), so persistent transports whose redelivery is timed by their store pass too.
 *
 * @module
 */

import assert from "node:assert/strict";
import { createLogger, MemoryMeter, MemorySink } from "@fw/runtime";
import { EventBus } from "../event_bus.ts";
import { handler } from "../handler.ts";
import type { HandlerOptions, Message } from "../handler_types.ts";
import { getPublisher } from "../publisher.ts";
import { deadLetterTopic, topic } from "../topic.ts";
import { Int, Optional } from "@fw/runtime";
import type { Transport } from "../transport.ts";
import { runDelayedDeliveryConformance } from "./delay_conformance.ts";

/** How the suite gets transports. */
export interface TransportHarness {
  /**
   * A transport on namespace `ns`. Two calls with the same `ns` stand for two processes sharing
   * one backend (they must see each other's messages); different names must be isolated.
   */
  create(ns: string): Transport | Promise<Transport>;
  /** Called after each test with the namespaces it used (drop keys, close clients). */
  cleanup?(namespaces: readonly string[]): void | Promise<void>;
  /** How long to wait for an expected delivery, in ms (default 5000). */
  timeoutMs?: number;
}

const Job = topic("conformance.job", { n: Int, tag: Optional(String) });
const FAST: HandlerOptions = { maxBackoff: 20, jitter: 0, timeout: 2000 };

/** Polls until `check` holds or the time runs out. */
async function until(check: () => boolean, ms: number, what: string): Promise<void> {
  const end = Date.now() + ms;
  while (!check()) {
    if (Date.now() > end) throw new Error(`Timed out after ${ms} ms waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 5));
  }
}

const settle = (ms = 100) => new Promise((r) => setTimeout(r, ms));

/**
 * Registers the conformance tests for a transport with `Deno.test`.
 *
 * @param name Implementation name used in test names.
 * @param harness Creates transports per namespace.
 */
export function runTransportConformance(name: string, harness: TransportHarness): void {
  const wait = harness.timeoutMs ?? 5000;
  let seq = 0;
  runDelayedDeliveryConformance(name, harness);

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

  test("delivers payload, attributes, trace id and message id", async (env) => {
    const bus = await env.bus();
    const got: Message<{ n: number }>[] = [];
    await bus.add(handler(Job).options({ ...FAST, group: "g1" }).handle((m) => void got.push(m)));
    await bus.start();
    const receipt = await getPublisher(Job, { bus })({ n: 1 }, {
      attributes: { region: "eu" },
      traceId: "0af7651916cd43dd8448eb211c80319c",
      messageId: "m-1",
    });
    await until(() => got.length === 1, wait, "the delivery");
    assert.equal(receipt.messageId, "m-1");
    assert.deepEqual(got[0].payload, { n: 1 });
    assert.equal(got[0].attributes.region, "eu");
    assert.equal(got[0].traceId, "0af7651916cd43dd8448eb211c80319c");
    assert.equal(got[0].id, "m-1");
    assert.equal(got[0].attempt, 1);
  });

  test("gives every group each message and shares a competing group's messages", async (env) => {
    const a1 = await env.bus(), a2 = await env.bus(), b = await env.bus();
    const seen = { a1: [] as number[], a2: [] as number[], b: [] as number[] };
    const on = (k: keyof typeof seen, group: string) =>
      handler(Job).options({ ...FAST, group }).handle((m) => void seen[k].push(m.payload.n));
    await a1.add(on("a1", "billing"));
    await a2.add(on("a2", "billing"));
    await b.add(on("b", "audit"));
    for (const bus of [a1, a2, b]) await bus.start();
    const publish = getPublisher(Job, { bus: a1 });
    for (let n = 0; n < 20; n++) await publish({ n });
    await until(() => seen.a1.length + seen.a2.length >= 20 && seen.b.length >= 20, wait, "20+20");
    await settle();
    const billing = [...seen.a1, ...seen.a2].sort((x, y) => x - y);
    assert.deepEqual(billing, [...Array(20).keys()], "each message once in the competing group");
    assert.deepEqual([...seen.b].sort((x, y) => x - y), [...Array(20).keys()]);
  });

  test("delivers to every instance of a broadcast group", async (env) => {
    const i1 = await env.bus(), i2 = await env.bus();
    const seen: number[][] = [[], []];
    for (const [k, bus] of [i1, i2].entries()) {
      await bus.add(
        handler(Job).options({ ...FAST, group: "cache", distribution: "broadcast" })
          .handle((m) => void seen[k].push(m.payload.n)),
      );
      await bus.start();
    }
    const publish = getPublisher(Job, { bus: i1 });
    for (let n = 0; n < 5; n++) await publish({ n });
    await until(() => seen[0].length >= 5 && seen[1].length >= 5, wait, "both instances");
    await settle();
    assert.deepEqual(seen.map((s) => [...s].sort()), [[0, 1, 2, 3, 4], [0, 1, 2, 3, 4]]);
  });

  test("retries a failing handler with increasing attempts, then acknowledges", async (env) => {
    const bus = await env.bus();
    const attempts: number[] = [];
    await bus.add(
      handler(Job).options({ ...FAST, group: "g", maxRetries: 5 }).handle((m) => {
        attempts.push(m.attempt);
        if (m.attempt < 3) throw new Error(`fail ${m.attempt}`);
      }),
    );
    await bus.start();
    await getPublisher(Job, { bus })({ n: 1 });
    await until(() => attempts.length === 3, wait, "three attempts");
    await settle();
    assert.deepEqual(attempts, [1, 2, 3]);
    assert.equal(env.meter.sum("events.handle.conformance.job.retry"), 2);
    assert.equal(env.meter.sum("events.handle.conformance.job.failure"), 2);
    assert.equal(env.meter.sum("events.handle.conformance.job.success"), 1);
    assert.equal((await bus.deadLetters()).length, 0);
  });

  test("dead-letters once after maxRetries and keeps it without a .dlq subscriber", async (env) => {
    const bus = await env.bus();
    let calls = 0;
    await bus.add(
      handler(Job).options({ ...FAST, group: "g", maxRetries: 2 }).handle(() => {
        calls++;
        throw new Error("always broken");
      }),
    );
    await bus.start();
    await getPublisher(Job, { bus })({ n: 7 }, { messageId: "dead-1" });
    await until(() => env.meter.sum("events.handle.conformance.job.dlq") === 1, wait, "the DLQ");
    await settle(150);
    assert.equal(calls, 3);
    const dead = await bus.deadLetters();
    assert.equal(dead.length, 1);
    const e = dead[0].envelope;
    assert.equal(e.id, "dead-1");
    assert.equal(e.topic, "conformance.job.dlq");
    assert.deepEqual(e.payload, { n: 7 });
    assert.equal(e.attributes["dlq.original_topic"], "conformance.job");
    assert.equal(e.attributes["dlq.attempts"], "3");
    assert.equal(e.attributes["dlq.error"], "always broken");
    assert.equal(e.attributes["dlq.handler"], "g");
    const outcomes = env.outcomes();
    assert.deepEqual(outcomes, ["retry", "retry", "dead-lettered"]);
  });

  test("hands dead letters to a <topic>.dlq handler instead of keeping them", async (env) => {
    const bus = await env.bus();
    const dlq: Message<{ n: number }>[] = [];
    await bus.add(
      handler(Job).options({ ...FAST, group: "g", maxRetries: 1 }).handle(() => {
        throw "not an Error";
      }),
    );
    await bus.add(
      handler(deadLetterTopic(Job)).options({ ...FAST, group: "ops" }).handle((m) =>
        void dlq.push(m)
      ),
    );
    await bus.start();
    await getPublisher(Job, { bus })({ n: 3 });
    await until(() => dlq.length === 1, wait, "the .dlq handler");
    await settle();
    assert.equal(dlq.length, 1);
    assert.deepEqual(dlq[0].payload, { n: 3 });
    assert.match(dlq[0].attributes["dlq.error"], /non-Error value: not an Error/);
    assert.equal((await bus.deadLetters()).length, 0);
  });

  test("discards with a log entry when dlq is false", async (env) => {
    const bus = await env.bus();
    await bus.add(
      handler(Job).options({ ...FAST, group: "g", maxRetries: 1, dlq: false }).handle(() => {
        throw new Error("x");
      }),
    );
    await bus.start();
    await getPublisher(Job, { bus })({ n: 1 });
    await until(() => env.outcomes().includes("discarded"), wait, "the discard");
    await settle();
    assert.deepEqual(env.outcomes(), ["retry", "discarded"]);
    assert.equal((await bus.deadLetters()).length, 0);
    assert.equal(env.meter.sum("events.handle.conformance.job.dlq"), 0);
  });

  test("manual ack: an ack completes, a missing ack times out and retries", async (env) => {
    const bus = await env.bus();
    const attempts: number[] = [];
    await bus.add(
      handler(Job).options({ ...FAST, group: "g", ack: "manual", timeout: 100 }).handle((m) => {
        attempts.push(m.attempt);
        if (m.attempt === 2) setTimeout(() => m.ack(), 5);
      }),
    );
    await bus.start();
    await getPublisher(Job, { bus })({ n: 1 });
    await until(() => env.outcomes().includes("acked"), wait, "the ack");
    await settle();
    assert.deepEqual(attempts, [1, 2]);
    assert.deepEqual(env.outcomes(), ["retry", "acked"]);
  });

  test("does not lose messages published while the only subscriber restarts", async (env) => {
    const first = await env.bus();
    const seen: number[] = [];
    const def = handler(Job).options({ ...FAST, group: "restart" }).handle((m) =>
      void seen.push(m.payload.n)
    );
    await first.add(def);
    await first.start();
    await getPublisher(Job, { bus: first })({ n: 0 });
    await until(() => seen.length === 1, wait, "the first message");
    await first.stop({ closeTransports: false });
    const publisher = await env.bus();
    await publisher.start();
    for (let n = 1; n <= 5; n++) await getPublisher(Job, { bus: publisher })({ n });
    const second = await env.bus();
    await second.add(def);
    await second.start();
    await until(() => seen.length >= 6, wait, "the messages published during the restart");
    await settle();
    assert.deepEqual([...seen].sort(), [0, 1, 2, 3, 4, 5]);
  });

  test("handles concurrent publishers exactly once per group", async (env) => {
    const consumer = await env.bus();
    const seen = new Map<number, number>();
    await consumer.add(
      handler(Job).options({ ...FAST, group: "g" }).handle((m) => {
        seen.set(m.payload.n, (seen.get(m.payload.n) ?? 0) + 1);
      }),
    );
    await consumer.start();
    const p1 = await env.bus(), p2 = await env.bus();
    await Promise.all([
      ...Array.from({ length: 25 }, (_, i) => getPublisher(Job, { bus: p1 })({ n: i })),
      ...Array.from({ length: 25 }, (_, i) => getPublisher(Job, { bus: p2 })({ n: 100 + i })),
    ]);
    await until(() => seen.size === 50, wait, "50 distinct messages");
    await settle();
    assert.equal(seen.size, 50);
    assert.ok([...seen.values()].every((c) => c === 1), "no message twice");
  });

  test("applies attribute filters and the concurrency limit", async (env) => {
    const bus = await env.bus();
    let running = 0, peak = 0;
    const seen: number[] = [];
    await bus.add(
      handler(Job).options({ ...FAST, group: "limited", concurrency: 2 })
        .filter({ attributes: { kind: "wanted" } })
        .handle(async (m) => {
          running++;
          peak = Math.max(peak, running);
          await new Promise((r) => setTimeout(r, 10));
          running--;
          seen.push(m.payload.n);
        }),
    );
    await bus.start();
    const publish = getPublisher(Job, { bus });
    for (let n = 0; n < 8; n++) {
      await publish({ n }, { attributes: { kind: n % 2 ? "other" : "wanted" } });
    }
    await until(() => seen.length === 4, wait, "the four wanted messages");
    await settle();
    assert.deepEqual([...seen].sort(), [0, 2, 4, 6]);
    assert.ok(peak <= 2, `at most 2 concurrent invocations, saw ${peak}`);
  });

  test("times out a hung handler, aborts msg.signal and retries", async (env) => {
    const bus = await env.bus();
    const aborted: boolean[] = [];
    await bus.add(
      handler(Job).options({ ...FAST, group: "slow", timeout: 50, maxRetries: 1 }).handle((m) => {
        if (m.attempt === 2) return;
        return new Promise<void>((resolve) => {
          m.signal.addEventListener("abort", () => {
            aborted.push(true);
            resolve();
          });
        });
      }),
    );
    await bus.start();
    await getPublisher(Job, { bus })({ n: 1 });
    await until(() => env.outcomes().includes("acked"), wait, "the retry after the time-out");
    assert.deepEqual(aborted, [true]);
    assert.deepEqual(env.outcomes(), ["retry", "acked"]);
  });

  test("a full queue drops with overflow drop and never loses with overflow throw", async (env) => {
    const bus = await env.bus();
    let release!: () => void;
    const gate = new Promise<void>((r) => release = r);
    const dropped: number[] = [], kept: number[] = [];
    await bus.add(
      handler(Job).options({
        ...FAST,
        group: "drop",
        concurrency: 1,
        queueLimit: 1,
        overflow: "drop",
      })
        .handle(async (m) => {
          await gate;
          dropped.push(m.payload.n);
        }),
    );
    await bus.add(
      handler(Job).options({ ...FAST, group: "keep", concurrency: 1, queueLimit: 1 })
        .handle(async (m) => {
          await gate;
          kept.push(m.payload.n);
        }),
    );
    await bus.start();
    const publish = getPublisher(Job, { bus });
    const refused: number[] = [];
    for (let n = 0; n < 4; n++) {
      await publish({ n }).catch(() => refused.push(n));
      // Let each delivery reach its consumer before the next (external transports are async).
      await until(
        () => env.meter.sum("events.handle.conformance.job.dropped") >= n - 1 || n < 2,
        wait,
        "the drop",
      );
    }
    release();
    const admission = env.transports[0].capabilities.admission;
    await until(
      () => kept.length + (admission ? refused.length : 0) >= 4 && dropped.length >= 2,
      wait,
      "the kept messages",
    );
    await settle();
    assert.equal(env.meter.sum("events.handle.conformance.job.dropped"), 2);
    // The "drop" group handled two distinct messages and dropped the other two. Which two
    // depends on the order the transport delivers in: only an ordering transport promises the
    // first two (Deno KV may deliver the second publish after the third).
    if (env.transports[0].capabilities.ordering) assert.deepEqual([...dropped].sort(), [0, 1]);
    assert.equal(new Set(dropped).size, 2);
    assert.ok(dropped.every((n) => n >= 0 && n < 4), `handled ${dropped}`);
    // With admission, publish threw for what "keep" could not take; otherwise it came later.
    assert.deepEqual([...kept, ...(admission ? refused : [])].sort(), [0, 1, 2, 3]);
    assert.equal(env.meter.sum("events.handle.conformance.job.dlq"), 0);
  });

  test("keeps publish order per key when it declares ordering", async (env) => {
    const bus = await env.bus();
    if (!env.transports[0].capabilities.ordering) return;
    const seen: number[] = [];
    await bus.add(
      handler(Job).options({ ...FAST, group: "ordered", concurrency: 1 }).handle(async (m) => {
        await new Promise((r) => setTimeout(r, m.payload.n % 3));
        seen.push(m.payload.n);
      }),
    );
    await bus.start();
    const publish = getPublisher(Job, { bus });
    for (let n = 0; n < 20; n++) await publish({ n }, { key: "k" });
    await until(() => seen.length === 20, wait, "20 ordered messages");
    assert.deepEqual(seen, [...Array(20).keys()]);
  });

  test("dead-letters a malformed envelope with the reason and keeps consuming", async (env) => {
    const bus = await env.bus();
    const seen: number[] = [];
    await bus.add(
      handler(Job).options({ ...FAST, group: "g" }).handle((m) => void seen.push(m.payload.n)),
    );
    await bus.start();
    const bad = {
      id: "bad-1",
      topic: "conformance.job",
      payload: { n: 1 },
      attributes: { x: 5 },
      traceId: "t",
      publishedAt: 0,
    };
    // A transport may refuse a malformed envelope at publish; one it accepts must be dead-lettered.
    const accepted = async (e: unknown) =>
      await env.transports[0].publish(e as never).then(() => true, () => false);
    const expected: string[] = [];
    if (await accepted(bad)) expected.push("bad-1");
    const wrongPayload = { ...bad, id: "bad-2", attributes: {}, payload: { n: "one" } };
    if (await accepted(wrongPayload)) expected.push("bad-2");
    await getPublisher(Job, { bus })({ n: 2 });
    await until(
      () =>
        seen.length === 1 &&
        env.meter.sum("events.handle.conformance.job.dlq") === expected.length,
      wait,
      "the dead letters and the good message",
    );
    await settle();
    const dead = (await bus.deadLetters()).map((d) => d.envelope);
    assert.deepEqual(dead.map((e) => e.id).sort(), expected);
    if (expected.includes("bad-1")) {
      assert.match(
        dead.find((e) => e.id === "bad-1")!.attributes["dlq.error"],
        /malformed envelope: envelope field "attributes"/,
      );
    }
    if (expected.includes("bad-2")) {
      assert.match(
        dead.find((e) => e.id === "bad-2")!.attributes["dlq.error"],
        /invalid payload: payload.n must be an integer/,
      );
    }
    assert.deepEqual(seen, [2]);
  });
}

class Env {
  readonly meter = new MemoryMeter();
  readonly sink = new MemorySink();
  readonly transports: Transport[] = [];
  readonly #buses: EventBus[] = [];
  constructor(readonly harness: TransportHarness, readonly ns: string) {}

  async bus(): Promise<EventBus> {
    const transport = await this.harness.create(this.ns);
    this.transports.push(transport);
    const bus = new EventBus({
      transports: { main: transport },
      meter: this.meter,
      logger: createLogger({ sink: this.sink, level: "debug" }),
    });
    this.#buses.push(bus);
    return bus;
  }

  outcomes(): string[] {
    return this.sink.records.filter((r) => r.message === "message handled").map((r) =>
      (r.fields.event as { outcome: string }).outcome
    );
  }

  async close(): Promise<void> {
    for (const bus of this.#buses) await bus.stop({ closeTransports: false });
    for (const t of new Set(this.transports)) await t.close();
    await this.harness.cleanup?.([this.ns]);
  }
}
