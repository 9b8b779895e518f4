/**
 * The delayed-delivery cases of the transport conformance suite (`conformance.ts` runs them for
 * every transport): a delayed message is never handed over before its time, then goes through
 * the normal delivery policy; messages due at the same time all arrive (in publish order where the
 * transport declares ordering); a delayed message survives the restart of its only subscriber;
 * bad `delay`/`deliverAt` values throw before anything is stored.
 *
 * Every "not early" check compares the handler's own `Date.now()` with the due time the publisher
 * computed, so it cannot pass by luck: a transport that delivers early fails it.
 *
 * @module
 */

import assert from "node:assert/strict";
import { createLogger, MemoryMeter, MemorySink } from "@fw/runtime";
import { EventBus } from "../event_bus.ts";
import { handler } from "../handler.ts";
import type { HandlerOptions } from "../handler_types.ts";
import { getPublisher } from "../publisher.ts";
import { topic } from "../topic.ts";
import { Int } from "@fw/runtime";
import type { Transport } from "../transport.ts";

/** How the delayed cases get transports (the fields of the suite's `TransportHarness`). */
export interface DelayHarness {
  /** A transport on namespace `ns`; equal names share one backend. */
  create(ns: string): Transport | Promise<Transport>;
  /** Called after each test with the namespaces it used. */
  cleanup?(namespaces: readonly string[]): void | Promise<void>;
  /** How long to wait for an expected delivery, in ms (default 5000). */
  timeoutMs?: number;
}

const Later = topic("conformance.later", { n: Int });
const FAST: HandlerOptions = { maxBackoff: 20, jitter: 0, timeout: 2000 };
/** Long enough that a transport delivering at publish time is caught, short enough for CI. */
const DELAY_MS = 400;

async function until(check: () => boolean, ms: number, what: string): Promise<void> {
  const end = Date.now() + ms;
  while (!check()) {
    if (Date.now() > end) throw new Error(`Timed out after ${ms} ms waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 5));
  }
}

class DelayEnv {
  readonly meter = new MemoryMeter();
  readonly #transports: Transport[] = [];
  readonly #buses: EventBus[] = [];
  constructor(readonly harness: DelayHarness, readonly ns: string) {}

  async bus(): Promise<EventBus> {
    const transport = await this.harness.create(this.ns);
    this.#transports.push(transport);
    const bus = new EventBus({
      transports: { main: transport },
      meter: this.meter,
      logger: createLogger({ sink: new MemorySink() }),
    });
    this.#buses.push(bus);
    return bus;
  }

  get transport(): Transport {
    return this.#transports[0];
  }

  async close(): Promise<void> {
    for (const bus of this.#buses) await bus.stop({ closeTransports: false });
    for (const t of new Set(this.#transports)) await t.close();
    await this.harness.cleanup?.([this.ns]);
  }
}

/** A received message: its number, attempt and when the handler saw it. */
interface Seen {
  readonly n: number;
  readonly attempt: number;
  readonly at: number;
}

/**
 * Registers the delayed-delivery tests for a transport with `Deno.test`.
 *
 * @param name Implementation name used in test names.
 * @param harness Creates transports per namespace.
 */
export function runDelayedDeliveryConformance(name: string, harness: DelayHarness): void {
  const wait = (harness.timeoutMs ?? 5000) + DELAY_MS;
  let seq = 0;

  function test(what: string, fn: (env: DelayEnv) => Promise<void>): void {
    Deno.test({
      name: `${name} ${what}`,
      sanitizeOps: false,
      sanitizeResources: false,
      fn: async () => {
        const env = new DelayEnv(harness, `${name.replace(/\W/g, "")}D-${Date.now()}-${++seq}`);
        try {
          await fn(env);
        } finally {
          await env.close();
        }
      },
    });
  }

  const recorder = (seen: Seen[], fail?: (n: number, attempt: number) => boolean) =>
    handler(Later).options({ ...FAST, group: "later", maxRetries: 3 }).handle((m) => {
      seen.push({ n: m.payload.n, attempt: m.attempt, at: Date.now() });
      if (fail?.(m.payload.n, m.attempt)) throw new Error(`fail ${m.attempt}`);
    });

  test("delayed publish: none early, then retried like any message", async (env) => {
    const bus = await env.bus();
    const seen: Seen[] = [];
    await bus.add(recorder(seen, (n, attempt) => n === 1 && attempt === 1));
    await bus.start();
    const publish = getPublisher(Later, { bus });
    const dueAt = new Map<number, number>();
    const at = Date.now() + DELAY_MS;
    await publish({ n: 1 }, { deliverAt: new Date(at) });
    dueAt.set(1, at);
    const before = Date.now();
    await publish({ n: 2 }, { delay: DELAY_MS });
    dueAt.set(2, before + DELAY_MS);
    await publish({ n: 3 }, { deliverAt: at + DELAY_MS });
    dueAt.set(3, at + DELAY_MS);
    await publish({ n: 0 });
    await until(() => seen.length >= 5, wait + DELAY_MS, "the delayed messages");
    await new Promise((r) => setTimeout(r, 100));
    for (const s of seen) {
      if (s.n === 0) continue;
      assert.ok(s.at >= dueAt.get(s.n)!, `message ${s.n} came ${dueAt.get(s.n)! - s.at} ms early`);
    }
    assert.equal(seen[0].n, 0, "the undelayed message first");
    const attempts = seen.filter((s) => s.n === 1).map((s) => s.attempt);
    assert.deepEqual(attempts, [1, 2], "a failing delayed message is retried");
    assert.deepEqual(seen.map((s) => s.n).sort(), [0, 1, 1, 2, 3]);
    assert.equal(env.meter.sum("events.handle.conformance.later.success"), 4);
  });

  test("delayed publish: equal due times all arrive, in publish order when ordered", async (env) => {
    const bus = await env.bus();
    const seen: number[] = [];
    let early = 0;
    const at = Date.now() + DELAY_MS;
    await bus.add(
      handler(Later).options({ ...FAST, group: "same", concurrency: 1 }).handle((m) => {
        if (Date.now() < at) early++;
        seen.push(m.payload.n);
      }),
    );
    await bus.start();
    const publish = getPublisher(Later, { bus });
    for (let n = 0; n < 20; n++) await publish({ n }, { deliverAt: at, key: "k" });
    await until(() => seen.length >= 20, wait, "20 messages due at the same time");
    await new Promise((r) => setTimeout(r, 100));
    assert.equal(early, 0, "none before the due time");
    if (env.transport.capabilities.ordering) assert.deepEqual(seen, [...Array(20).keys()]);
    else assert.deepEqual([...seen].sort((a, b) => a - b), [...Array(20).keys()]);
  });

  test("delayed publish: survives a restart of the only subscriber", async (env) => {
    const first = await env.bus();
    const seen: Seen[] = [];
    await first.add(recorder(seen));
    await first.start();
    const at = Date.now() + DELAY_MS;
    await getPublisher(Later, { bus: first })({ n: 7 }, { deliverAt: at });
    await first.stop({ closeTransports: false });
    const second = await env.bus();
    await second.add(recorder(seen));
    await second.start();
    await until(() => seen.length >= 1, wait, "the delayed message after the restart");
    await new Promise((r) => setTimeout(r, 150));
    assert.deepEqual(seen.map((s) => s.n), [7], "delivered once");
    assert.ok(seen[0].at >= at, `came ${at - seen[0].at} ms early`);
  });

  test("delayed publish: bad values throw a TypeError naming the option, storing nothing", async (env) => {
    const bus = await env.bus();
    const seen: Seen[] = [];
    await bus.add(recorder(seen));
    await bus.start();
    const publish = getPublisher(Later, { bus });
    const max = env.transport.capabilities.maxDelay;
    assert.ok(typeof max === "number" && max > 0, "the transport states its maxDelay");
    const bad: Array<[Record<string, unknown>, RegExp]> = [
      [{ delay: -1 }, /"delay"/],
      [{ delay: NaN }, /"delay"/],
      [{ delay: "5" }, /"delay"/],
      [{ deliverAt: new Date("nope") }, /"deliverAt"/],
      [{ deliverAt: -5 }, /"deliverAt"/],
      [{ delay: 10, deliverAt: Date.now() + 10 }, /"delay" and "deliverAt"/],
      [{ delay: max + 60_000 }, /"delay".*at most/],
      [{ deliverAt: Date.now() + max + 60_000 }, /"deliverAt".*at most/],
    ];
    for (const [options, message] of bad) {
      await assert.rejects(publish({ n: 9 }, options), (err: Error) => {
        assert.ok(err instanceof TypeError, `${JSON.stringify(options)}: ${err}`);
        assert.match(err.message, message);
        return true;
      });
    }
    await publish({ n: 1 }, { delay: 0 });
    await until(() => seen.length >= 1, wait, "the undelayed message");
    await new Promise((r) => setTimeout(r, 100));
    assert.deepEqual(seen.map((s) => s.n), [1], "nothing of the refused publishes was stored");
  });
}
