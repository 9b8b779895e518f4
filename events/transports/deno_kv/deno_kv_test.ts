import assert from "node:assert/strict";
import { createLogger, Int, ManualClock, MemoryMeter, MemorySink } from "@fw/runtime";
import { EventBus } from "../../event_bus.ts";
import { handler } from "../../handler.ts";
import type { HandlerOptions } from "../../handler_types.ts";
import { getPublisher } from "../../publisher.ts";
import { topic } from "../../topic.ts";
import type { Transport } from "../../transport.ts";
import { runTransportConformance } from "../conformance.ts";
import { DenoKvTransport, type DenoKvTransportOptions } from "./deno_kv.ts";

const dir = await Deno.makeTempDir({ prefix: "fw-denokv-conformance-" });
const dbPath = (ns: string) => `${dir}/${ns}.sqlite`;

async function removeDatabase(path: string): Promise<void> {
  for (const suffix of ["", "-wal", "-shm"]) {
    await Deno.remove(path + suffix).catch(() => {});
  }
}

runTransportConformance("DenoKvTransport", {
  // One database file per test; each create() opens its own handle, as another process would.
  create: (ns) => new DenoKvTransport({ path: dbPath(ns) }),
  cleanup: async (namespaces) => {
    for (const ns of namespaces) await removeDatabase(dbPath(ns));
  },
  timeoutMs: 10_000,
});

const Job = topic("kv.job", { n: Int });
const FAST: HandlerOptions = { maxBackoff: 20, jitter: 0, timeout: 2000 };

/** Polls until `check` holds or the time runs out. */
async function until(check: () => boolean | Promise<boolean>, ms: number, what: string) {
  const end = Date.now() + ms;
  while (!(await check())) {
    if (Date.now() > end) throw new Error(`Timed out after ${ms} ms waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 5));
  }
}

/** A fresh database file for one test, removed afterwards with everything opened on it. */
async function withDatabase(fn: (path: string, track: Track) => Promise<void>): Promise<void> {
  const path = `${await Deno.makeTempDir({ dir, prefix: "kv-" })}/db.sqlite`;
  const track = new Track();
  try {
    await fn(path, track);
  } finally {
    await track.close();
    await removeDatabase(path);
  }
}

class Track {
  readonly sink = new MemorySink();
  readonly meter = new MemoryMeter();
  readonly logger = createLogger({ sink: this.sink, level: "debug" });
  readonly #buses: EventBus[] = [];
  readonly #transports: Transport[] = [];

  transport(options: DenoKvTransportOptions): DenoKvTransport {
    const t = new DenoKvTransport({ meter: this.meter, logger: this.logger, ...options });
    this.#transports.push(t);
    return t;
  }

  bus(transport: Transport): EventBus {
    const bus = new EventBus({
      transports: { kv: transport },
      meter: this.meter,
      logger: this.logger,
    });
    this.#buses.push(bus);
    return bus;
  }

  async close(): Promise<void> {
    for (const bus of this.#buses) await bus.stop({ closeTransports: false });
    for (const t of this.#transports) await t.close();
  }
}

Deno.test("denoKvTransport keeps dead letters across reopening the same path", async () => {
  await withDatabase(async (path, track) => {
    const first = track.transport({ path });
    const bus = track.bus(first);
    await bus.add(
      handler(Job).options({ ...FAST, group: "g", maxRetries: 0 }).handle(() => {
        throw new Error("broken for good");
      }),
    );
    await bus.start();
    await getPublisher(Job, { bus })({ n: 4 }, { messageId: "dead-kv-1" });
    await until(async () => (await first.deadLetters.list()).length === 1, 5000, "the dead letter");
    await bus.stop();

    const reopened = track.transport({ path });
    const kept = await reopened.deadLetters.list({ topic: "kv.job" });
    assert.deepEqual(kept.map((d) => d.envelope.id), ["dead-kv-1"]);
    assert.equal(kept[0].envelope.topic, "kv.job.dlq");
    assert.deepEqual(kept[0].envelope.payload, { n: 4 });
    assert.equal(kept[0].envelope.attributes["dlq.error"], "broken for good");
    assert.deepEqual((await reopened.deadLetters.take(["dead-kv-1"])).length, 1);
    await reopened.close();

    assert.deepEqual(await track.transport({ path }).deadLetters.list(), []);
  });
});

Deno.test("denoKvTransport delivers a retry scheduled before close after reopening", async () => {
  await withDatabase(async (path, track) => {
    const attempts: number[] = [];
    const def = handler(Job).options({ ...FAST, group: "g", maxBackoff: 400 }).handle((m) => {
      attempts.push(m.attempt);
      if (m.attempt === 1) throw new Error("not yet");
    });
    const first = track.transport({ path });
    const bus = track.bus(first);
    await bus.add(def);
    await bus.start();
    await getPublisher(Job, { bus })({ n: 1 });
    await until(() => track.meter.sum("events.handle.kv.job.retry") === 1, 5000, "the retry");
    await bus.stop();
    assert.deepEqual(attempts, [1]);

    const second = track.bus(track.transport({ path }));
    await second.add(def);
    await second.start();
    await until(() => attempts.length === 2, 5000, "the retried delivery");
    assert.deepEqual(attempts, [1, 2]);
  });
});

Deno.test("denoKvTransport redelivers a delivery still running at close after reopening", async () => {
  await withDatabase(async (path, track) => {
    const seen: Array<[string, number]> = [];
    const first = track.transport({ path });
    const bus = track.bus(first);
    await bus.add(
      handler(Job).options({ ...FAST, group: "g", ack: "manual", timeout: 300 }).handle((m) =>
        void seen.push(["first", m.attempt])
      ),
    );
    await bus.start();
    await getPublisher(Job, { bus })({ n: 1 });
    await until(() => seen.length === 1, 5000, "the first delivery");
    await first.close(); // The handler has not acked: Deno KV gets the message back.

    const second = track.bus(track.transport({ path }));
    await second.add(
      handler(Job).options({ ...FAST, group: "g" }).handle((m) =>
        void seen.push(["second", m.attempt])
      ),
    );
    await second.start();
    await until(() => seen.length === 2, 5000, "the redelivery");
    assert.deepEqual(seen, [["first", 1], ["second", 1]]);
  });
});

Deno.test("denoKvTransport queues again a message Deno KV gave up on, as the next attempt", async () => {
  await withDatabase(async (path, track) => {
    const seen: number[] = [];
    // An empty schedule: the first failed delivery goes to `keysIfUndelivered` at once.
    const first = track.transport({ path, backoffSchedule: [] });
    const bus = track.bus(first);
    await bus.add(
      handler(Job).options({ ...FAST, group: "g", ack: "manual", timeout: 300 }).handle((m) =>
        void seen.push(m.attempt)
      ),
    );
    await bus.start();
    await getPublisher(Job, { bus })({ n: 1 });
    await until(() => seen.length === 1, 5000, "the first delivery");
    await first.close();

    const second = track.bus(track.transport({ path }));
    await second.add(
      handler(Job).options({ ...FAST, group: "g" }).handle((m) => void seen.push(m.attempt)),
    );
    await second.start();
    await until(() => seen.length === 2, 5000, "the requeued message");
    assert.deepEqual(seen, [1, 2]);
    assert.ok(track.sink.records.some((r) => r.message.includes("could not deliver")));
  });
});

Deno.test("denoKvTransport delivers a message once per dedupeKey across processes", async () => {
  await withDatabase(async (path, track) => {
    const seen: number[] = [];
    const bus = track.bus(track.transport({ path }));
    await bus.add(
      handler(Job).options({ ...FAST, group: "g" }).handle((m) => void seen.push(m.payload.n)),
    );
    await bus.start();
    const other = track.bus(track.transport({ path }));
    await getPublisher(Job, { bus })({ n: 1 }, { dedupeKey: "order-7" });
    await getPublisher(Job, { bus: other })({ n: 2 }, { dedupeKey: "order-7" });
    await getPublisher(Job, { bus: other })({ n: 3 }, { dedupeKey: "order-8" });
    await until(() => seen.length >= 2, 5000, "two messages");
    await new Promise((r) => setTimeout(r, 200));
    assert.deepEqual(seen.sort(), [1, 3]);
  });
});

Deno.test("denoKvTransport keeps key prefixes apart on one database and hands messages on", async () => {
  await withDatabase(async (path, track) => {
    const seen: string[] = [];
    for (const prefix of ["shop", "blog"]) {
      const bus = track.bus(track.transport({ path, keyPrefix: prefix }));
      await bus.add(
        handler(Job).options({ ...FAST, group: "g" }).handle((m) =>
          void seen.push(`${prefix}:${m.payload.n}`)
        ),
      );
      await bus.start();
    }
    const publisher = track.bus(track.transport({ path, keyPrefix: "shop" }));
    for (let n = 0; n < 10; n++) await getPublisher(Job, { bus: publisher })({ n });
    await until(() => seen.length >= 10, 5000, "ten messages");
    await new Promise((r) => setTimeout(r, 200));
    assert.deepEqual(seen.sort(), [...Array(10).keys()].map((n) => `shop:${n}`).sort());
  });
});

Deno.test("denoKvTransport keeps messages for a group with no live instance until one joins", async () => {
  await withDatabase(async (path, track) => {
    const seen: number[] = [];
    const def = handler(Job).options({ ...FAST, group: "later" }).handle((m) =>
      void seen.push(m.payload.n)
    );
    const first = track.bus(track.transport({ path }));
    await first.add(def);
    await first.start();
    await first.stop({ closeTransports: false }); // The group stays registered, with no instance.
    const publisher = track.bus(track.transport({ path }));
    for (let n = 0; n < 3; n++) await getPublisher(Job, { bus: publisher })({ n });
    await new Promise((r) => setTimeout(r, 300));
    assert.deepEqual(seen, []);
    const joined = track.bus(track.transport({ path }));
    await joined.add(def);
    await joined.start();
    await until(() => seen.length === 3, 5000, "the waiting messages");
    assert.deepEqual(seen.sort(), [0, 1, 2]);
  });
});

Deno.test("denoKvTransport refuses to join a group as another distribution", async () => {
  await withDatabase(async (path, track) => {
    const bus = track.bus(track.transport({ path }));
    await bus.add(handler(Job).options({ ...FAST, group: "g" }).handle(() => {}));
    await bus.start();
    const other = track.transport({ path });
    await assert.rejects(
      () =>
        other.subscribe(
          { topic: "kv.job", group: "g", distribution: "broadcast", instanceId: "x" },
          () => "accepted",
        ),
      /Cannot join group "g" of topic "kv.job" as broadcast: it is competing in Deno KV \(dropGroup\(\) removes it\)/,
    );
    await other.dropGroup("kv.job", "g");
    const sub = await other.subscribe(
      { topic: "kv.job", group: "g", distribution: "broadcast", instanceId: "x" },
      () => "accepted",
    );
    await sub.close();
  });
});

Deno.test("denoKvTransport bounds the dead letters it keeps and counts evictions", async () => {
  await withDatabase(async (path, track) => {
    const t = track.transport({ path, deadLetterLimit: 2 });
    const env = {
      id: "",
      topic: "a.dlq",
      payload: {},
      attributes: {},
      traceId: "t",
      publishedAt: 0,
    };
    for (const id of ["1", "2", "3"]) await t.deadLetter({ ...env, id });
    assert.deepEqual((await t.deadLetters.list()).map((d) => d.envelope.id), ["2", "3"]);
    assert.equal(await t.deadLetters.count(), 2);
    assert.equal(track.meter.sum("events.dlq.evicted"), 1);
    assert.ok(
      track.sink.records.some((r) => r.message === "dead letter evicted: the buffer is full"),
    );
  });
});

Deno.test("denoKvTransport passes queue values fw did not send to foreignMessage", async () => {
  const kv = await Deno.openKv(":memory:");
  const foreign: unknown[] = [];
  const t = new DenoKvTransport({ kv, foreignMessage: (v) => void foreign.push(v) });
  const sub = await t.subscribe(
    { topic: "kv.job", group: "g", distribution: "competing", instanceId: "i" },
    () => "accepted",
  );
  await kv.enqueue({ mine: true });
  await until(() => foreign.length === 1, 5000, "the foreign message");
  assert.deepEqual(foreign, [{ mine: true }]);
  await sub.close();
  await t.close();
  assert.equal((await kv.get(["probe"])).versionstamp, null, "the handle stays open");
  kv.close();
});

Deno.test("denoKvTransport checks its options at construction", () => {
  assert.throws(
    () => new DenoKvTransport({ path: ":memory:", kv: {} as Deno.Kv }),
    /give "path" or "kv", not both/,
  );
  assert.throws(() => new DenoKvTransport({ keyPrefix: "" }), /option "keyPrefix" ""/);
  assert.throws(
    () => new DenoKvTransport({ backoffSchedule: [1, 2, 3, 4, 5, 6] }),
    /option "backoffSchedule" \[1,2,3,4,5,6\]: expected at most 5 non-negative integers/,
  );
  assert.throws(() => new DenoKvTransport({ instanceTtlMs: 0 }), /option "instanceTtlMs" 0/);
  assert.throws(() => new DenoKvTransport({ deadLetterLimit: -1 }), /"deadLetterLimit" -1/);
  assert.equal(new DenoKvTransport({ path: "x.db" }).capabilities.persistent, true);
});

Deno.test("denoKvTransport stops addressing a broadcast instance whose heartbeat expired", async () => {
  await withDatabase(async (path, track) => {
    // The subscriber's clock never moves, so its heartbeat never runs: as if it had hung.
    const subscriberClock = new ManualClock(0);
    const publisherClock = new ManualClock(0);
    const seen: number[] = [];
    const subscriber = track.bus(track.transport({ path, clock: subscriberClock }));
    await subscriber.add(
      handler(Job).options({ ...FAST, group: "cache", distribution: "broadcast" }).handle((m) =>
        void seen.push(m.payload.n)
      ),
    );
    await subscriber.start();
    const publisher = track.bus(track.transport({ path, clock: publisherClock }));
    await getPublisher(Job, { bus: publisher })({ n: 1 });
    await until(() => seen.length === 1, 5000, "the delivery while the instance is live");
    await publisherClock.advance(30_001); // Past the 30 s instance TTL.
    await getPublisher(Job, { bus: publisher })({ n: 2 });
    await new Promise((r) => setTimeout(r, 300));
    assert.deepEqual(seen, [1]);
  });
});

Deno.test("denoKvTransport queues a message parked while an instance of its group joins", async () => {
  await withDatabase(async (path, track) => {
    // Transport A reads the database through a handle that can hold one look for live instances
    // open: the test makes an instance join in between that look and the park that follows it.
    const real = await Deno.openKv(path);
    let armed = false;
    let looked!: () => void;
    const lookedOnce = new Promise<void>((r) => looked = r);
    let resume!: () => void;
    const resumed = new Promise<void>((r) => resume = r);
    const kv = new Proxy(real, {
      get(target, prop) {
        if (prop === "list") {
          return (selector: Deno.KvListSelector, options?: Deno.KvListOptions) => {
            const entries = target.list(selector, options);
            const prefix = "prefix" in selector ? selector.prefix : [];
            if (!armed || prefix[1] !== "instances") return entries;
            armed = false;
            return (async function* () {
              for await (const e of entries) yield e;
              looked();
              await resumed;
            })();
          };
        }
        const value = Reflect.get(target, prop, target);
        return typeof value === "function" ? value.bind(target) : value;
      },
    });
    const seen: number[] = [];
    const def = handler(Job).options({ ...FAST, group: "joining" }).handle((m) =>
      void seen.push(m.payload.n)
    );
    try {
      // A joins the group (it stays registered) and leaves; its queue listener stays on.
      const a = track.bus(track.transport({ kv }));
      await a.add(def);
      await a.start();
      await a.stop({ closeTransports: false });
      const publisher = track.bus(track.transport({ path }));
      await publisher.start();
      armed = true;
      await getPublisher(Job, { bus: publisher })({ n: 1 });
      // A got the message, found no live instance, and is held before it parks the message.
      await lookedOnce;
      const c = track.bus(track.transport({ path }));
      await c.add(def);
      await c.start(); // registers its instance, then queues what is parked: nothing yet
      resume();
      // The next repair round is 10 s away: the message must not wait for it.
      await until(() => seen.length === 1, 4000, "the message parked while the instance joined");
      assert.deepEqual(seen, [1]);
    } finally {
      resume();
      await track.close();
      real.close();
    }
  });
});

Deno.test("denoKvTransport delivers delayed publishes of one turn, none early, each once, retried alone", async () => {
  await withDatabase(async (path, track) => {
    const seen: Array<{ n: number; attempt: number; late: number }> = [];
    const first = Date.now() + 600;
    const due = (n: number) => first + n * 7; // 40 messages over 280 ms: several batches
    const bus = track.bus(track.transport({ path }));
    await bus.add(
      handler(Job).options({ ...FAST, group: "g", concurrency: 8 }).handle((m) => {
        seen.push({ n: m.payload.n, attempt: m.attempt, late: Date.now() - due(m.payload.n) });
        if (m.payload.n % 10 === 3 && m.attempt === 1) throw new Error("not yet");
      }),
    );
    await bus.start();
    const publish = getPublisher(Job, { bus });
    await Promise.all([...Array(40).keys()].map((n) => publish({ n }, { deliverAt: due(n) })));
    await until(() => seen.length >= 44, 10_000, "40 messages and 4 retries");
    await new Promise((r) => setTimeout(r, 300));
    assert.deepEqual(seen.filter((s) => s.late < 0), [], "none early");
    const firsts = seen.filter((s) => s.attempt === 1).map((s) => s.n).sort((a, b) => a - b);
    assert.deepEqual(firsts, [...Array(40).keys()]);
    const retried = seen.filter((s) => s.attempt === 2).map((s) => s.n).sort((a, b) => a - b);
    assert.deepEqual(retried, [3, 13, 23, 33]);
  });
});

Deno.test("denoKvTransport hands delayed publishes of one turn on to the process with the group", async () => {
  await withDatabase(async (path, track) => {
    const Other = topic("kv.other", { n: Int });
    const seen: Array<{ n: number; late: number }> = [];
    const first = Date.now() + 600;
    const due = (n: number) => first + n * 5;
    // Both processes listen to the database's one queue; only the second has group "g".
    const listener = track.bus(track.transport({ path, pollIntervalMs: 50 }));
    await listener.add(handler(Other).options({ ...FAST, group: "o" }).handle(() => {}));
    await listener.start();
    const owner = track.bus(track.transport({ path, pollIntervalMs: 50 }));
    await owner.add(
      handler(Job).options({ ...FAST, group: "g" }).handle((m) =>
        void seen.push({ n: m.payload.n, late: Date.now() - due(m.payload.n) })
      ),
    );
    await owner.start();
    for (const bus of [listener, owner]) {
      const publish = getPublisher(Job, { bus });
      await Promise.all([...Array(20).keys()].map((n) => publish({ n }, { deliverAt: due(n) })));
    }
    await until(() => seen.length >= 40, 10_000, "40 messages");
    await new Promise((r) => setTimeout(r, 300));
    assert.deepEqual(seen.filter((s) => s.late < 0), [], "none early");
    assert.deepEqual(
      seen.map((s) => s.n).sort((a, b) => a - b),
      [...Array(20).keys()].flatMap((n) => [n, n]),
    );
  });
});

Deno.test("denoKvTransport delivers the delayed publishes of a batch held at close after reopening", async () => {
  await withDatabase(async (path, track) => {
    const seen: number[] = [];
    const def = handler(Job).options({ ...FAST, group: "g" }).handle((m) =>
      void seen.push(m.payload.n)
    );
    const first = track.transport({ path });
    const bus = track.bus(first);
    await bus.add(def);
    await bus.start();
    const at = Date.now() + 500;
    const publish = getPublisher(Job, { bus });
    // Parts 0..3 due at once, parts 4..5 about 90 ms later: the listener holds them meanwhile.
    await Promise.all(
      [0, 1, 2, 3, 4, 5].map((n) => publish({ n }, { deliverAt: at + (n >= 4 ? 90 : 0) })),
    );
    await until(
      () => track.meter.sum("events.handle.kv.job.success") >= 4,
      5000,
      "the parts due first",
    );
    await first.close(); // Marks the four settled parts: the redelivered batch brings the others.
    const second = track.bus(track.transport({ path }));
    await second.add(def);
    await second.start();
    await until(() => new Set(seen).size === 6, 10_000, "the held parts after reopening");
    await new Promise((r) => setTimeout(r, 200));
    assert.deepEqual(seen.sort(), [0, 1, 2, 3, 4, 5], "each once");
  });
});

Deno.test("denoKvTransport skips the parts of a redelivered batch that an earlier delivery moved", async () => {
  const kv = await Deno.openKv(":memory:");
  const t = new DenoKvTransport({ kv, keyPrefix: "b" });
  const bus = new EventBus({
    transports: { kv: t },
    logger: createLogger({ sink: new MemorySink() }),
  });
  const seen: number[] = [];
  await bus.add(
    handler(Job).options({ ...FAST, group: "g" }).handle((m) => void seen.push(m.payload.n)),
  );
  await bus.start();
  // What a process that retried part 1, then was killed before Deno KV heard of it, leaves behind.
  const envelope = (n: number) => ({
    id: crypto.randomUUID(),
    topic: "kv.job",
    payload: { n },
    attributes: {},
    publishedAt: Date.now(),
    traceId: "0".repeat(32),
  });
  await kv.set(["b", "moved", "batch-1", 1], true);
  await kv.enqueue({
    mark: "fw.events.denokv.v1",
    kind: "batch",
    prefix: "b",
    qid: "batch-1",
    topic: "kv.job",
    group: "g",
    attempt: 1,
    parts: [0, 1, 2].map((n) => ({ envelope: envelope(n), due: Date.now() })),
  });
  await until(() => seen.length >= 2, 5000, "the parts not moved");
  await new Promise((r) => setTimeout(r, 200));
  assert.deepEqual(seen.sort(), [0, 2]);
  await bus.stop();
  kv.close();
});

Deno.test("denoKvTransport reaches a group another process created after its last publish", async () => {
  await withDatabase(async (path, track) => {
    const seen: string[] = [];
    const join = async (group: string) => {
      const bus = track.bus(track.transport({ path }));
      await bus.add(
        handler(Job).options({ ...FAST, group }).handle((m) =>
          void seen.push(`${group}:${m.payload.n}`)
        ),
      );
      await bus.start();
    };
    await join("first");
    const publisher = track.bus(track.transport({ path }));
    const publish = getPublisher(Job, { bus: publisher });
    await publish({ n: 1 }); // The publisher now knows the topic's one group.
    await until(() => seen.length === 1, 5000, "the first message");
    await join("second"); // Another handle (process) creates a second group.
    await Promise.all([publish({ n: 2 }), publish({ n: 3 })]);
    await until(() => seen.length === 5, 5000, "both groups' messages");
    await new Promise((r) => setTimeout(r, 200));
    assert.deepEqual(seen.sort(), ["first:1", "first:2", "first:3", "second:2", "second:3"]);
  });
});
