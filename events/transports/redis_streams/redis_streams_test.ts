import assert from "node:assert/strict";
import { createLogger, Int, ManualClock, MemoryMeter, MemorySink } from "@fw/runtime";
import { EventBus } from "../../event_bus.ts";
import { handler } from "../../handler.ts";
import type { HandlerOptions } from "../../handler_types.ts";
import { getPublisher } from "../../publisher.ts";
import { topic } from "../../topic.ts";
import { openRedis } from "../../_redis.ts";
import { runTransportConformance } from "../conformance.ts";
import { compareIds, reapMember, trimStream } from "./_registry.ts";
import { KvStreamTransport, type KvStreamTransportOptions } from "./redis_streams.ts";

const URL = "redis://127.0.0.1:6379";
const run = crypto.randomUUID().slice(0, 8);
const prefixOf = (ns: string) => `fwtest:${run}:${ns}:`;

/** Deletes every key under a prefix. */
async function dropKeys(prefix: string): Promise<void> {
  const redis = await openRedis("test", { url: URL });
  try {
    let cursor = "0";
    do {
      const [next, found] = await redis.main.sendCommand([
        "SCAN",
        cursor,
        "MATCH",
        `${prefix}*`,
        "COUNT",
        "1000",
      ]) as [string, string[]]; // deno-fmt-ignore
      cursor = next;
      if (found.length) await redis.main.sendCommand(["DEL", ...found]);
    } while (cursor !== "0");
  } finally {
    await redis.close();
  }
}

runTransportConformance("KvStreamTransport", {
  create: (ns) => new KvStreamTransport({ url: URL, keyPrefix: prefixOf(ns) }),
  cleanup: async (namespaces) => {
    for (const ns of namespaces) await dropKeys(prefixOf(ns));
  },
  timeoutMs: 10_000,
});

const Job = topic("redis.job", { n: Int });
const FAST: HandlerOptions = { maxBackoff: 20, jitter: 0, timeout: 2000 };

/** Polls until `check` holds or the time runs out. */
async function until(check: () => boolean | Promise<boolean>, ms: number, what: string) {
  const end = Date.now() + ms;
  while (!(await check())) {
    if (Date.now() > end) throw new Error(`Timed out after ${ms} ms waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 10));
  }
}

/** Transports, buses and a raw connection under a fresh prefix, all closed and dropped after. */
async function withRedis(
  fn: (t: Track) => Promise<void>,
): Promise<void> {
  const track = new Track(`fwtest:${run}:${crypto.randomUUID().slice(0, 8)}:`);
  track.raw = await openRedis("test", { url: URL });
  try {
    await fn(track);
  } finally {
    await track.close();
  }
}

class Track {
  readonly sink = new MemorySink();
  readonly meter = new MemoryMeter();
  readonly logger = createLogger({ sink: this.sink, level: "debug" });
  raw!: Awaited<ReturnType<typeof openRedis>>;
  readonly #buses: EventBus[] = [];
  readonly #transports: KvStreamTransport[] = [];
  constructor(readonly prefix: string) {}

  cmd(...args: string[]): Promise<unknown> {
    return this.raw.main.sendCommand(args);
  }

  transport(options: Partial<KvStreamTransportOptions> = {}): KvStreamTransport {
    const t = new KvStreamTransport({
      url: URL,
      keyPrefix: this.prefix,
      logger: this.logger,
      meter: this.meter,
      ...options,
    });
    this.#transports.push(t);
    return t;
  }

  bus(transport: KvStreamTransport, clock?: ManualClock): EventBus {
    const bus = new EventBus({
      transports: { redis: transport },
      meter: this.meter,
      logger: this.logger,
      ...(clock ? { clock } : {}),
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
    for (const t of this.#transports) await t.close();
    await this.raw.close();
    await dropKeys(this.prefix);
  }
}

Deno.test("kvStreamTransport() refuses bad options naming the option", () => {
  assert.throws(
    () => new KvStreamTransport({ url: URL, keyPrefix: "" }),
    /Invalid kvStreamTransport\(\) option "keyPrefix": expected a non-empty string/,
  );
  assert.throws(
    () => new KvStreamTransport({ url: URL, prefetch: 0 }),
    /option "prefetch": expected an integer >= 1, got 0/,
  );
  assert.throws(() => new KvStreamTransport({}), /give either "url" or "client"/);
});

Deno.test("kvStreamTransport() with a wrong url fails start-up naming the address", async () => {
  const listener = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  const { port } = listener.addr as Deno.NetAddr;
  listener.close();
  const transport = new KvStreamTransport({ url: `redis://:secret@127.0.0.1:${port}` });
  const bus = new EventBus({ transports: { redis: transport } });
  await bus.add(handler(Job).options({ group: "g" }).handle(() => {}));
  try {
    await assert.rejects(
      () => bus.start(),
      (e: Error) =>
        e.message.includes(`cannot connect to Redis at redis://:***@127.0.0.1:${port}`) &&
        !e.message.includes("secret"),
    );
  } finally {
    await transport.close();
  }
});

Deno.test("kvStreamTransport dead-letters entries that are not fw envelopes and acknowledges them", async () => {
  await withRedis(async (t) => {
    const bus = t.bus(t.transport());
    const seen: number[] = [];
    await bus.add(
      handler(Job).options({ ...FAST, group: "g" }).handle((m) => {
        seen.push(m.payload.n);
      }),
    );
    await bus.start();
    const stream = `${t.prefix}{redis.job}`;
    await t.cmd("XADD", stream, "*", "e", "{not json");
    await t.cmd("XADD", stream, "*", "other", "field");
    await getPublisher(Job, { bus })({ n: 1 });
    await until(
      async () => seen.length === 1 && (await bus.deadLetters()).length === 2,
      5000,
      "2 dead letters",
    );
    const reasons = (await bus.deadLetters()).map((d) => d.envelope.attributes["dlq.error"]);
    assert.match(reasons[0], /^malformed envelope: the stream entry is not JSON: /);
    assert.equal(reasons[1], 'malformed envelope: the stream entry has no "e" field');
    assert.equal((await bus.deadLetters())[0].envelope.payload, "{not json");
    await until(
      async () => {
        const summary = await t.cmd("XPENDING", stream, "g") as unknown[];
        return summary[0] === 0;
      },
      5000,
      "every entry acknowledged",
    );
    assert.deepEqual(seen, [1]);
  });
});

Deno.test("kvStreamTransport keeps two key prefixes apart", async () => {
  await withRedis(async (t) => {
    const other = `${t.prefix}other:`;
    const a = t.bus(t.transport());
    const b = t.bus(t.transport({ keyPrefix: other }));
    const seen = { a: [] as number[], b: [] as number[] };
    await a.add(
      handler(Job).options({ ...FAST, group: "g" }).handle((m) => void seen.a.push(m.payload.n)),
    );
    await b.add(
      handler(Job).options({ ...FAST, group: "g" }).handle((m) => void seen.b.push(m.payload.n)),
    );
    await a.start();
    await b.start();
    await getPublisher(Job, { bus: a })({ n: 1 });
    await getPublisher(Job, { bus: b })({ n: 2 });
    await until(() => seen.a.length === 1 && seen.b.length === 1, 5000, "both");
    await new Promise((r) => setTimeout(r, 100));
    assert.deepEqual(seen, { a: [1], b: [2] });
  });
});

Deno.test("kvStreamTransport honours dedupeKey across processes", async () => {
  await withRedis(async (t) => {
    const consumer = t.bus(t.transport());
    const seen: number[] = [];
    await consumer.add(
      handler(Job).options({ ...FAST, group: "g" }).handle((m) => void seen.push(m.payload.n)),
    );
    await consumer.start();
    const p1 = t.bus(t.transport()), p2 = t.bus(t.transport());
    await getPublisher(Job, { bus: p1 })({ n: 1 }, { dedupeKey: "order-1" });
    await getPublisher(Job, { bus: p2 })({ n: 2 }, { dedupeKey: "order-1" });
    await getPublisher(Job, { bus: p2 })({ n: 3 }, { dedupeKey: "order-2" });
    await until(() => seen.length >= 2, 5000, "two messages");
    await new Promise((r) => setTimeout(r, 150));
    assert.deepEqual(seen.sort(), [1, 3]);
  });
});

Deno.test("kvStreamTransport retries on the handler's back-off, timed by the injected clock", async () => {
  await withRedis(async (t) => {
    const clock = new ManualClock(1_000_000);
    const bus = t.bus(t.transport({ clock, retryPollMs: 60_000 }), clock);
    const attempts: number[] = [];
    await bus.add(
      handler(Job).options({ group: "g", jitter: 0, maxRetries: 3 }).handle((m) => {
        attempts.push(m.attempt);
        if (m.attempt < 3) throw new Error("not yet");
      }),
    );
    await bus.start();
    await getPublisher(Job, { bus })({ n: 1 });
    await until(() => attempts.length === 1, 5000, "attempt 1");
    await until(
      async () => Number(await t.cmd("ZCARD", `${t.prefix}{redis.job}:delayed:g`)) === 1,
      5000,
      "the scheduled retry",
    );
    await clock.advance(999);
    await new Promise((r) => setTimeout(r, 150));
    assert.deepEqual(attempts, [1], "nothing before the 1 s back-off");
    await clock.advance(1);
    await until(() => attempts.length === 2, 5000, "attempt 2 at 1 s");
    await until(
      async () => Number(await t.cmd("ZCARD", `${t.prefix}{redis.job}:delayed:g`)) === 1,
      5000,
      "the second retry",
    );
    await clock.advance(1999);
    await new Promise((r) => setTimeout(r, 150));
    assert.deepEqual(attempts, [1, 2], "nothing before the 2 s back-off");
    await clock.advance(1);
    await until(() => attempts.length === 3, 5000, "attempt 3 at 2 s");
    assert.deepEqual(attempts, [1, 2, 3]);
    await until(() => t.outcomes().includes("acked"), 5000, "the ack");
  });
});

Deno.test("kvStreamTransport takes over an entry a dead consumer held, as the next attempt", async () => {
  await withRedis(async (t) => {
    const stream = `${t.prefix}{redis.job}`;
    const bus = t.bus(t.transport({ claimGraceMs: 0 }));
    const got: Array<[number, number]> = [];
    await bus.add(
      handler(Job).options({ group: "g", timeout: 300 }).handle((m) =>
        void got.push([m.payload.n, m.attempt])
      ),
    );
    await bus.start();
    // A consumer "ghost" reads an entry and dies without acknowledging it.
    const env = {
      id: "held-1",
      topic: "redis.job",
      payload: { n: 9 },
      attributes: {},
      traceId: "a".repeat(32),
      publishedAt: 0,
    };
    const conn = await t.raw.dedicated();
    await bus.stop({ closeTransports: false });
    await t.cmd("XADD", stream, "*", "e", JSON.stringify(env));
    await conn.sendCommand([
      "XREADGROUP",
      "GROUP",
      "g",
      "ghost",
      "COUNT",
      "1",
      "STREAMS",
      stream,
      ">",
    ]);
    await bus.start();
    await until(() => got.length === 1, 5000, "the take-over");
    assert.deepEqual(got, [[9, 2]]);
    assert.ok(t.sink.records.some((r) => r.message.includes("took over a delivery")));
  });
});

Deno.test("kvStreamTransport removes the Redis group of a broadcast instance that is gone", async () => {
  await withRedis(async (t) => {
    const stream = `${t.prefix}{redis.job}`;
    const clock = new ManualClock(1_000_000);
    const live = t.bus(t.transport({ clock, instanceTtlMs: 3000 }), clock);
    await live.add(
      handler(Job).options({ ...FAST, group: "cache", distribution: "broadcast" }).handle(() => {}),
    );
    await live.start();
    // An instance that died: registered (its last heartbeat 2 s ago, so it expires at the live
    // one's next heartbeat), its group holding an unacknowledged entry.
    const dead = JSON.stringify({ t: "redis.job", g: "cache~dead", c: "dead", k: "b" });
    await t.cmd("XGROUP", "CREATE", stream, "cache~dead", "$");
    await t.cmd("ZADD", `${t.prefix}{redis.job}:instances`, String(clock.now() + 1000), dead);
    await t.cmd("XADD", stream, "*", "e", "{}");
    const conn = await t.raw.dedicated();
    await conn.sendCommand(["XREADGROUP", "GROUP", "cache~dead", "dead", "STREAMS", stream, ">"]);
    const groups = async () =>
      ((await t.cmd("XINFO", "GROUPS", stream)) as unknown[][]).map((g) => String(g[1])).sort();
    assert.equal((await groups()).length, 2);
    // One heartbeat of the live one: it renews itself and reaps the dead one. Its Redis round
    // trips may take longer than the clock's settling under load, so wait for the outcome.
    await clock.advance(1000);
    await until(async () => (await groups()).length === 1, 30_000, "the dead group to go");
    assert.match((await groups())[0], /^cache~/);
    assert.notEqual((await groups())[0], "cache~dead");
    assert.equal(await t.cmd("ZSCORE", `${t.prefix}{redis.job}:instances`, dead), null);
  });
});

Deno.test("trimStream() never drops entries a group has not acknowledged", async () => {
  await withRedis(async (t) => {
    const stream = `${t.prefix}trim`;
    await t.cmd("XGROUP", "CREATE", stream, "fast", "$", "MKSTREAM");
    await t.cmd("XGROUP", "CREATE", stream, "slow", "$");
    for (let i = 0; i < 10; i++) {
      const args = ["XADD", stream, "*", "e", "x"];
      await Promise.all(Array.from({ length: 100 }, () => t.cmd(...args)));
    }
    const ids = async (group: string, count: number) => {
      const r = await t.cmd(
        "XREADGROUP",
        "GROUP",
        group,
        "c",
        "COUNT",
        String(count),
        "STREAMS",
        stream,
        ">",
      ) as [string, [string, unknown][]][];
      return r[0][1].map((e) => e[0]);
    };
    await t.cmd("XACK", stream, "fast", ...await ids("fast", 1000));
    await trimStream(t.raw.main, stream);
    assert.equal(await t.cmd("XLEN", stream), 1000, "slow has read nothing");
    const read = await ids("slow", 600);
    await t.cmd("XACK", stream, "slow", ...read.slice(0, 500));
    await trimStream(t.raw.main, stream);
    const left = Number(await t.cmd("XLEN", stream));
    assert.ok(left >= 500 && left < 1000, `kept the 500 not acknowledged, left ${left}`);
    const first = (await t.cmd("XRANGE", stream, "-", "+", "COUNT", "1") as [string][])[0][0];
    assert.ok(compareIds(first, read[500]) <= 0, "the oldest pending entry is kept");
  });
});

Deno.test("kvStreamTransport keeps dead letters in Redis, bounded, and redrives them", async () => {
  await withRedis(async (t) => {
    const transport = t.transport({ deadLetterLimit: 2 });
    const bus = t.bus(transport);
    await bus.add(
      handler(Job).options({ ...FAST, group: "g", maxRetries: 0 }).handle((m) => {
        if (m.attempt === 1 && m.attributes["redriven"] !== "yes") throw new Error("broken");
      }),
    );
    await bus.start();
    for (let n = 1; n <= 3; n++) await getPublisher(Job, { bus })({ n }, { messageId: `d${n}` });
    await until(() => t.meter.sum("events.dlq.evicted") === 1, 5000, "one eviction");
    // Another process on the prefix sees the same list.
    const other = t.transport();
    assert.deepEqual((await other.deadLetters.list()).map((d) => d.envelope.id).sort(), [
      "d2",
      "d3",
    ]);
    assert.deepEqual((await other.deadLetters.list({ topic: "redis.job" })).length, 2);
    assert.equal((await other.deadLetters.take(["d2"])).length, 1);
    assert.equal((await transport.deadLetters.take(["d2"])).length, 0, "taken only once");
    assert.equal(await bus.redrive(["d3"]), 1);
    await until(
      () => t.meter.sum("events.handle.redis.job.dlq") === 4,
      5000,
      "the redriven one failing again",
    );
    assert.equal(await transport.deadLetters.count(), 1);
  });
});

Deno.test("reapMember() never deletes a competing consumer that still holds entries", async () => {
  await withRedis(async (t) => {
    const stream = `${t.prefix}{redis.job}`;
    const member = JSON.stringify({ t: "redis.job", g: "g", c: "gone", k: "c" });
    await t.cmd("XGROUP", "CREATE", stream, "g", "$", "MKSTREAM");
    await t.cmd("ZADD", `${t.prefix}{redis.job}:instances`, "1", member);
    const id = String(await t.cmd("XADD", stream, "*", "e", "{}"));
    await t.cmd("XREADGROUP", "GROUP", "g", "gone", "STREAMS", stream, ">");
    const consumers = async () =>
      ((await t.cmd("XINFO", "CONSUMERS", stream, "g")) as unknown[][]).map((c) => String(c[1]));
    assert.equal(await reapMember(t.raw.main, t.prefix, member, 2), -2);
    assert.deepEqual(await consumers(), ["gone"], "kept while it holds an entry");
    await t.cmd("XACK", stream, "g", id);
    assert.equal(await reapMember(t.raw.main, t.prefix, member, 2), 0);
    assert.deepEqual(await consumers(), []);
    assert.equal(await t.cmd("ZSCORE", `${t.prefix}{redis.job}:instances`, member), null);
  });
});
