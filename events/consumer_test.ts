import assert from "node:assert/strict";
import {
  Container,
  createLogger,
  formatLogLine,
  ManualClock,
  MemoryMeter,
  MemorySink,
  provider,
  runInContext,
  useContext,
  ValidationException,
} from "@fw/runtime";
import { EventBus } from "./event_bus.ts";
import { handler } from "./handler.ts";
import type { HandlerOptions, Message } from "./handler_types.ts";
import { MemoryBroker } from "./transports/memory_broker.ts";
import { getPublisher } from "./publisher.ts";
import { topic } from "./topic.ts";
import { ArrayOf, Email, Int, Uuid } from "@fw/runtime";
import type { EventContext } from "./consumer.ts";
import { type DeliveryListener, QueueFullError, type Transport } from "./transport.ts";

const Order = topic("orders.created", { id: Uuid, total: Int });
const ID = "6f1c2a5e-8a3b-4f1e-9d2c-1b2a3c4d5e6f";

function setup(
  options: { random?: () => number; simulateDuplicates?: boolean; limit?: number } = {},
) {
  const clock = new ManualClock(0);
  const meter = new MemoryMeter();
  const sink = new MemorySink();
  const broker = new MemoryBroker({
    clock,
    random: options.random,
    simulateDuplicates: options.simulateDuplicates,
    deadLetterLimit: options.limit,
    meter,
  });
  const container = new Container();
  const bus = new EventBus({
    transports: { memory: broker },
    clock,
    meter,
    container,
    logger: createLogger({ sink, level: "debug", clock: () => clock.now() }),
    random: () => 0.5,
  });
  const publish = getPublisher(Order, { bus });
  const outcomes = () =>
    sink.records.filter((r) => r.message === "message handled").map((r) =>
      (r.fields.event as { outcome: string }).outcome
    );
  return { clock, meter, sink, broker, bus, publish, outcomes, container };
}

const exact: HandlerOptions = { jitter: 0 };

Deno.test("Consumer retries after 1 s, 2 s, 4 s ... capped at maxBackoff, then dead-letters", async () => {
  const { clock, bus, publish, outcomes, meter } = setup();
  const times: number[] = [];
  await bus.add(
    handler(Order).options({ ...exact, maxRetries: 5, maxBackoff: 5000 }).handle(() => {
      times.push(clock.now());
      throw new Error("boom");
    }),
  );
  await bus.start();
  await publish({ id: ID, total: 1 });
  await clock.runAll();
  assert.deepEqual(times, [0, 1000, 3000, 7000, 12000, 17000]);
  assert.deepEqual(outcomes(), ["retry", "retry", "retry", "retry", "retry", "dead-lettered"]);
  assert.equal(meter.sum("events.handle.orders.created.retry"), 5);
  assert.equal(meter.sum("events.handle.orders.created.failure"), 6);
  assert.equal(meter.sum("events.handle.orders.created.dlq"), 1);
  assert.equal((await bus.deadLetters()).length, 1);
  await bus.stop();
});

Deno.test("Consumer uses the default of 10 retries and jitter that only shortens delays", async () => {
  const { clock, bus, publish } = setup();
  const times: number[] = [];
  await bus.add(
    handler(Order).handle(() => {
      times.push(clock.now());
      throw new Error("x");
    }),
  );
  await bus.start();
  await publish({ id: ID, total: 1 });
  await clock.runAll();
  assert.equal(times.length, 11);
  const gaps = times.slice(1).map((t, i) => t - times[i]);
  // random() = 0.5 and jitter 0.1: each delay is 95% of min(1000 * 2^(n-1), 60000).
  assert.deepEqual(gaps, [950, 1900, 3800, 7600, 15200, 30400, 57000, 57000, 57000, 57000]);
  await bus.stop();
});

Deno.test("Consumer times out a hung handler, aborts msg.signal and retries", async () => {
  const { clock, bus, publish, outcomes } = setup();
  const signals: AbortSignal[] = [];
  await bus.add(
    handler(Order).options({ ...exact, timeout: 500, maxRetries: 1 }).handle((m) => {
      signals.push(m.signal);
      return new Promise(() => {});
    }),
  );
  await bus.start();
  await publish({ id: ID, total: 1 });
  await clock.advance(499);
  assert.equal(signals[0].aborted, false);
  await clock.advance(1);
  assert.equal(signals[0].aborted, true);
  assert.match(String(signals[0].reason), /timed out after 500 ms/);
  await clock.runAll();
  assert.deepEqual(outcomes(), ["retry", "dead-lettered"]);
  const dead = await bus.deadLetters();
  assert.equal(dead[0].envelope.attributes["dlq.error"], "Handler timed out after 500 ms");
  await bus.stop();
});

Deno.test("Consumer manual ack: ack twice or after the time-out is ignored", async () => {
  const { clock, bus, publish, outcomes, meter } = setup();
  const acks: Array<() => void> = [];
  await bus.add(
    handler(Order).options({ ...exact, ack: "manual", timeout: 100, maxRetries: 2 }).handle((m) => {
      acks.push(() => m.ack());
      if (m.attempt === 2) {
        m.ack();
        m.ack();
      }
    }),
  );
  await bus.start();
  await publish({ id: ID, total: 1 });
  await clock.advance(100); // attempt 1 times out
  acks[0](); // late ack: ignored
  await clock.runAll();
  assert.deepEqual(outcomes(), ["retry", "acked"]);
  assert.equal(meter.sum("events.handle.orders.created.success"), 1);
  await bus.stop();
});

Deno.test("Consumer manual ack: a throwing handler is retried like auto", async () => {
  const { clock, bus, publish, outcomes } = setup();
  await bus.add(
    handler(Order).options({ ...exact, ack: "manual", maxRetries: 1 }).handle((m) => {
      if (m.attempt === 1) throw new Error("first");
      m.ack();
    }),
  );
  await bus.start();
  await publish({ id: ID, total: 1 });
  await clock.runAll();
  assert.deepEqual(outcomes(), ["retry", "acked"]);
  await bus.stop();
});

Deno.test("Consumer limits concurrency and queues the rest", async () => {
  const { clock, bus, publish } = setup();
  let running = 0, peak = 0, done = 0;
  await bus.add(
    handler(Order).options({ concurrency: 2 }).handle(async () => {
      running++;
      peak = Math.max(peak, running);
      await new Promise<void>((r) => clock.setTimeout(r, 10));
      running--;
      done++;
    }),
  );
  await bus.start();
  for (let i = 0; i < 6; i++) await publish({ id: ID, total: i });
  await clock.runAll();
  assert.equal(done, 6);
  assert.equal(peak, 2);
  await bus.stop();
});

Deno.test("publish throws QueueFullError when the queue is full and overflow is throw", async () => {
  const { clock, bus, publish } = setup();
  const handled: number[] = [];
  await bus.add(
    handler(Order).options({ concurrency: 1, queueLimit: 1 }).handle(async (m) => {
      await new Promise<void>((r) => clock.setTimeout(r, 10));
      handled.push(m.payload.total);
    }),
  );
  await bus.start();
  await publish({ id: ID, total: 1 }); // running
  await publish({ id: ID, total: 2 }); // queued
  await assert.rejects(publish({ id: ID, total: 3 }), (err) => {
    assert.ok(err instanceof QueueFullError);
    assert.match(err.message, /handler queue is full for group "orders.created"/);
    return true;
  });
  await clock.runAll();
  assert.deepEqual(handled, [1, 2]);
  await bus.stop();
});

Deno.test("overflow drop: the delivery is dropped, counted and logged once, never dead-lettered", async () => {
  const { clock, bus, publish, outcomes, meter } = setup();
  await bus.add(
    handler(Order).options({ concurrency: 1, queueLimit: 1, overflow: "drop" }).handle(async () => {
      await new Promise<void>((r) => clock.setTimeout(r, 10));
    }),
  );
  await bus.start();
  for (let i = 0; i < 4; i++) await publish({ id: ID, total: i });
  await clock.runAll();
  assert.equal(meter.sum("events.handle.orders.created.dropped"), 2);
  assert.deepEqual(outcomes().sort(), ["acked", "acked", "dropped", "dropped"]);
  assert.equal((await bus.deadLetters()).length, 0);
  await bus.stop();
});

Deno.test("EventBus.stop drains running and queued work", async () => {
  const { clock, bus, publish } = setup();
  const done: number[] = [];
  await bus.add(
    handler(Order).options({ concurrency: 1 }).handle(async (m) => {
      await new Promise((r) => setTimeout(r, 5));
      done.push(m.payload.total);
    }),
  );
  await bus.start();
  for (let i = 0; i < 3; i++) await publish({ id: ID, total: i });
  await bus.stop();
  assert.deepEqual(done, [0, 1, 2]);
  assert.equal(clock.pending, 0);
});

Deno.test("concurrent async handlers each keep their own event context across awaits", async () => {
  const { bus, publish } = setup();
  const seen: string[] = [];
  let release!: () => void;
  const gate = new Promise<void>((r) => release = r);
  await bus.add(
    handler(Order).options({ concurrency: 3 }).handle(async (m) => {
      await gate;
      await Promise.resolve();
      const ctx = useContext<EventContext & { user?: unknown }>();
      seen.push(`${m.id} ${ctx.eventMessageId} ${ctx.traceId} ${ctx.user === undefined}`);
    }),
  );
  await bus.start();
  await runInContext(
    { traceId: "4bf92f3577b34da6a3ce929d0e0e4736", user: { sub: "u1" } },
    () =>
      Promise.all(
        ["m-1", "m-2", "m-3"].map((messageId) => publish({ id: ID, total: 1 }, { messageId })),
      ),
  );
  release();
  await bus.stop();
  assert.deepEqual(seen.sort(), [
    "m-1 m-1 4bf92f3577b34da6a3ce929d0e0e4736 true",
    "m-2 m-2 4bf92f3577b34da6a3ce929d0e0e4736 true",
    "m-3 m-3 4bf92f3577b34da6a3ce929d0e0e4736 true",
  ]);
});

Deno.test("handlers run in their own context and DI scope with the event values", async () => {
  const { clock, bus, publish, container } = setup();
  let made = 0, disposed = 0;
  const Tx = provider({
    name: "Tx",
    lifetime: "scoped",
    factory: () => ({ n: ++made }),
    dispose: () => void disposed++,
  });
  const seen: Array<EventContext & { tx: number; user: unknown }> = [];
  await bus.add(
    handler(Order).inject({ tx: Tx }).options({ ...exact, maxRetries: 1 }).handle(
      (deps, m) => {
        const ctx = useContext<EventContext & { user?: unknown }>();
        seen.push({ ...ctx, tx: deps.tx.n, user: ctx.user });
        if (m.attempt === 1) throw new Error("again");
      },
    ),
  );
  void container;
  await bus.start();
  await runInContext(
    { traceId: "4bf92f3577b34da6a3ce929d0e0e4736", user: { sub: "u1" } },
    () => publish({ id: ID, total: 1 }, { messageId: "m-9" }),
  );
  await clock.runAll();
  assert.deepEqual(
    seen.map(({ traceId, eventTopic, eventMessageId, eventAttempt, tx, user }) => ({
      traceId,
      eventTopic,
      eventMessageId,
      eventAttempt,
      tx,
      user,
    })),
    [1, 2].map((attempt) => ({
      traceId: "4bf92f3577b34da6a3ce929d0e0e4736",
      eventTopic: "orders.created",
      eventMessageId: "m-9",
      eventAttempt: attempt,
      tx: attempt,
      user: undefined,
    })),
  );
  assert.equal(disposed, 2);
  await bus.stop();
});

Deno.test("publish captures auth.* from the context user and ignores caller auth.* attributes", async () => {
  const { clock, bus, publish } = setup();
  const got: Message[] = [];
  await bus.add(handler(Order).handle((m) => void got.push(m)));
  await bus.start();
  const user = {
    sub: "u-1",
    email: "a@b.co",
    azp: "web",
    client_id: "cli",
    scopes: [],
    roles: [],
    claims: {},
  };
  await runInContext(
    { traceId: "aaaabbbbccccddddeeeeffff00001111", user },
    () =>
      publish({ id: ID, total: 1 }, {
        attributes: { "auth.sub": "admin", "auth.role": "x", region: "eu" },
      }),
  );
  await publish({ id: ID, total: 2 }, { attributes: { "auth.sub": "spoof" } });
  await clock.runAll();
  assert.deepEqual(got[0].attributes, {
    region: "eu",
    "auth.sub": "u-1",
    "auth.email": "a@b.co",
    "auth.azp": "web",
    "auth.client_id": "cli",
  });
  assert.equal(got[0].traceId, "aaaabbbbccccddddeeeeffff00001111");
  assert.deepEqual(got[1].attributes, {});
  assert.match(got[1].traceId, /^[0-9a-f]{32}$/);
  await bus.stop();
});

Deno.test("an explicit traceId option wins over the context", async () => {
  const { clock, bus, publish } = setup();
  const got: string[] = [];
  await bus.add(handler(Order).handle((m) => void got.push(m.traceId)));
  await bus.start();
  await runInContext(
    { traceId: "11111111111111111111111111111111" },
    () => publish({ id: ID, total: 1 }, { traceId: "22222222222222222222222222222222" }),
  );
  await clock.runAll();
  assert.deepEqual(got, ["22222222222222222222222222222222"]);
  await bus.stop();
});

Deno.test("publish validates before sending and counts publish errors", async () => {
  const { bus, publish, meter } = setup();
  let calls = 0;
  await bus.add(handler(Order).handle(() => void calls++));
  await bus.start();
  await assert.rejects(publish({ id: "nope", total: 1.5 }), (err) => {
    assert.ok(err instanceof ValidationException);
    assert.deepEqual(err.errors, [
      { field: "payload.id", message: "payload.id must be a valid UUID" },
      { field: "payload.total", message: "payload.total must be an integer" },
    ]);
    return true;
  });
  await assert.rejects(
    publish({ id: ID, total: 1 }, { attributes: { n: 1 as never } }),
    /attribute "n"/,
  );
  await publish({ id: ID, total: 1 });
  assert.equal(meter.sum("events.publish.orders.created.error"), 1);
  assert.equal(meter.sum("events.publish.orders.created"), 1);
  assert.equal(calls, 1);
  await bus.stop();
});

Deno.test("filters deliver only messages whose attributes match", async () => {
  const { clock, bus, publish } = setup();
  const eu: number[] = [];
  await bus.add(
    handler(Order).filter({ attributes: { region: "eu" } }).handle((m) =>
      void eu.push(m.payload.total)
    ),
  );
  await bus.start();
  await publish({ id: ID, total: 1 }, { attributes: { region: "eu" } });
  await publish({ id: ID, total: 2 }, { attributes: { region: "us" } });
  await publish({ id: ID, total: 3 });
  await clock.runAll();
  assert.deepEqual(eu, [1]);
  await bus.stop();
});

Deno.test("competing instances of one group take turns (round-robin)", async () => {
  const { clock, broker, meter } = setup();
  const seen: string[] = [];
  const buses = ["a", "b", "c"].map((name) => {
    const bus = new EventBus({ transports: { memory: broker }, clock, meter });
    return { name, bus };
  });
  for (const { name, bus } of buses) {
    await bus.add(handler(Order).options({ group: "g" }).handle(() => void seen.push(name)));
    await bus.start();
  }
  const publish = getPublisher(Order, { bus: buses[0].bus });
  for (let i = 0; i < 6; i++) await publish({ id: ID, total: i });
  await clock.runAll();
  assert.deepEqual(seen, ["a", "b", "c", "a", "b", "c"]);
  for (const { bus } of buses) await bus.stop({ closeTransports: false });
});

Deno.test("the dead-letter buffer is bounded, evicts the oldest and can redrive", async () => {
  const { clock, bus, publish, meter } = setup({ limit: 2 });
  let fail = true;
  const ok: number[] = [];
  await bus.add(
    handler(Order).options({ maxRetries: 0 }).handle((m) => {
      if (fail) throw new Error("down");
      ok.push(m.payload.total);
    }),
  );
  await bus.start();
  for (let i = 1; i <= 3; i++) {
    await publish({ id: ID, total: i }, { messageId: `m${i}`, dedupeKey: `k${i}` });
  }
  await clock.runAll();
  const dead = await bus.deadLetters();
  assert.deepEqual(dead.map((d) => d.envelope.id), ["m2", "m3"]);
  assert.equal(meter.sum("events.dlq.evicted"), 1);
  assert.equal(meter.sum("events.handle.orders.created.dlq"), 3);
  fail = false;
  assert.equal(await bus.redrive(["m3"]), 1);
  await clock.runAll();
  assert.deepEqual(ok, [3]);
  assert.deepEqual((await bus.deadLetters()).map((d) => d.envelope.id), ["m2"]);
  await bus.stop();
});

Deno.test("simulateDuplicates redelivers about 2% of handled messages", async () => {
  let seed = 42;
  const random = () => ((seed = (seed * 1103515245 + 12345) % 2 ** 31) / 2 ** 31);
  const { clock, bus, publish, broker } = setup({ random, simulateDuplicates: true });
  let handled = 0;
  await bus.add(handler(Order).handle(() => void handled++));
  await bus.start();
  for (let i = 0; i < 2000; i++) await publish({ id: ID, total: i });
  await clock.runAll();
  const extra = handled - 2000;
  assert.equal(extra, broker.duplicatesSimulated);
  assert.ok(extra >= 20 && extra <= 70, `about 2% duplicates, got ${extra}`);
  await bus.stop();
});

Deno.test("a dedupeKey suppresses repeats inside the window", async () => {
  const { clock, bus, publish } = setup();
  let handled = 0;
  await bus.add(handler(Order).handle(() => void handled++));
  await bus.start();
  await publish({ id: ID, total: 1 }, { dedupeKey: "order-1" });
  await publish({ id: ID, total: 1 }, { dedupeKey: "order-1" });
  await clock.advance(600_000);
  await publish({ id: ID, total: 1 }, { dedupeKey: "order-1" });
  await clock.runAll();
  assert.equal(handled, 2);
  await bus.stop();
});

Deno.test("the completion log line carries the trace id and the event object", async () => {
  const { clock, bus, publish, sink } = setup();
  await bus.add(handler(Order).options({ group: "billing" }).handle(() => {}));
  await bus.start();
  await publish({ id: ID, total: 1 }, {
    messageId: "m-1",
    traceId: "0af7651916cd43dd8448eb211c80319c",
  });
  await clock.runAll();
  const record = sink.records.find((r) => r.message === "message handled")!;
  assert.equal(
    formatLogLine(record),
    'INFO [0af7651916cd43dd8448eb211c80319c] message handled {"event":{"topic":"orders.created","messageId":"m-1","attempt":1,"outcome":"acked","duration":0,"handler":"billing"}}',
  );
  await bus.stop();
});

Deno.test("handler() rejects unknown and invalid options naming them", () => {
  assert.throws(
    () => handler(Order).options({ retries: 3 } as never),
    /Unknown handler option "retries"/,
  );
  assert.throws(
    () => handler(Order).options({ maxRetries: -1 }),
    /"maxRetries".*integer >= 0, got -1/,
  );
  assert.throws(() => handler(Order).options({ overflow: "block" as never }), /"overflow"/);
  assert.throws(() => handler({} as never), /expected a topic/);
  assert.throws(() => topic("Bad Name", { a: Email }), /Invalid topic name "Bad Name"/);
});

Deno.test("EventBus.stop waits for acks that share one batched write, and logs its failure once", async () => {
  // A transport that, like the Redis reader, writes the acks of one turn together: every ack of
  // the batch returns the same promise.
  let write: { resolve: () => void; reject: (err: Error) => void } | undefined;
  let batch: Promise<void> | undefined;
  let acked = 0;
  let listener: DeliveryListener | undefined;
  const transport: Transport = {
    name: "batching",
    capabilities: { ordering: false, persistent: true, external: false, admission: false },
    publish: () => Promise.resolve(),
    subscribe: (_spec, l) => {
      listener = l;
      return Promise.resolve({ close: () => Promise.resolve() });
    },
    deadLetter: () => Promise.resolve(),
    deadLetters: { list: () => Promise.resolve([]), take: () => Promise.resolve([]) },
    close: () => Promise.resolve(),
  };
  const ack = () => {
    acked++;
    return batch ??= new Promise<void>((resolve, reject) => write = { resolve, reject });
  };
  const sink = new MemorySink();
  const bus = new EventBus({
    transports: { batching: transport },
    logger: createLogger({ sink, level: "error" }),
  });
  let handled = 0;
  await bus.add(handler(Order).options({ concurrency: 10 }).handle(() => void handled++));
  await bus.start();
  for (let i = 0; i < 5; i++) {
    const envelope = {
      id: crypto.randomUUID(),
      topic: Order.name,
      payload: { id: ID, total: i },
      attributes: {},
      traceId: "0af7651916cd43dd8448eb211c80319c",
      publishedAt: 0,
    };
    listener!({ envelope, attempt: 1, ack, retry: () => Promise.resolve() });
  }
  while (acked < 5) await new Promise((r) => setTimeout(r, 1));
  let stopped = false;
  const stopping = bus.stop().then(() => stopped = true);
  for (let i = 0; i < 10; i++) await new Promise((r) => setTimeout(r, 0));
  assert.equal(stopped, false, "stop() returned before the batched write was answered");
  write!.reject(new Error("connection lost"));
  await stopping;
  assert.equal(handled, 5);
  const failures = sink.records.filter((r) => r.message === "event transport call failed");
  assert.equal(failures.length, 1);
});

Deno.test("each delivery of a published message gets its own payload: a handler's changes reach no other group, retry or dead letter", async () => {
  const { clock, bus } = setup();
  const Cart = topic("carts.changed", { id: Uuid, lines: ArrayOf({ sku: Email, qty: Int }) });
  const seen: unknown[] = [];
  const mutate = (m: Message<unknown>) => {
    const payload = m.payload as { lines: { qty: number }[]; extra?: boolean };
    seen.push(structuredClone(payload));
    payload.lines[0].qty = 99;
    payload.extra = true;
    throw new Error("boom");
  };
  await bus.add(handler(Cart).options({ ...exact, group: "a", maxRetries: 1 }).handle(mutate));
  await bus.add(handler(Cart).options({ ...exact, group: "b", maxRetries: 0 }).handle(mutate));
  await bus.start();
  const payload = { id: ID, lines: [{ sku: "a@b.co", qty: 1 }] };
  await getPublisher(Cart, { bus })(payload);
  await clock.runAll();
  const original = { id: ID, lines: [{ sku: "a@b.co", qty: 1 }] };
  assert.deepEqual(seen, [original, original, original]);
  const dead = await bus.deadLetters({ topic: "carts.changed.dlq" });
  assert.deepEqual(dead.map((d) => d.envelope.payload), [original, original]);
  assert.deepEqual(payload, original);
  await bus.stop();
});
