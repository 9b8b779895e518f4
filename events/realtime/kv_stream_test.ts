import assert from "node:assert/strict";
import { createLogger, Int, MemorySink } from "@fw/runtime";
import { openRedis, type RedisClient } from "../_redis.ts";
import { topic } from "../topic.ts";
import { kvStream } from "./kv_stream.ts";
import { runRealtimeConformance } from "./conformance.ts";
import { RealtimeCursorError, type RealtimeGap, type RealtimeMessage } from "./realtime.ts";
import { dropKeys, killClients, until } from "./testdata/redis_support.ts";

const URL = "redis://127.0.0.1:6379";
const run = crypto.randomUUID().slice(0, 8);

runRealtimeConformance("kvStream", {
  create: (ns, { maxLen }) => kvStream({ url: URL, keyPrefix: `fwtest:${run}:${ns}:`, maxLen }),
  cleanup: (namespaces) => dropKeys(namespaces.map((ns) => `fwtest:${run}:${ns}:`)),
});

const Tick = topic("tick", { n: Int });
const n = (m: RealtimeMessage) => (m.payload as { n: number }).n;

async function withPrefix(fn: (prefix: string) => Promise<void>): Promise<void> {
  const prefix = `fwtest:${run}:${crypto.randomUUID().slice(0, 8)}:`;
  try {
    await fn(prefix);
  } finally {
    await dropKeys([prefix]);
  }
}

Deno.test("kvStream() resumes after its reader's connection is killed: every message once, in order", async () => {
  await withPrefix(async (prefix) => {
    const publisher = kvStream({ url: URL, keyPrefix: prefix });
    const subscriber = kvStream({ url: URL, keyPrefix: prefix });
    try {
      const got: number[] = [], gaps: RealtimeGap[] = [];
      const ids: string[] = [];
      await subscriber.subscribe(Tick, (m) => {
        got.push(n(m));
        ids.push(m.id);
      }, { onGap: (g) => void gaps.push(g) });
      for (let i = 0; i < 5; i++) await publisher.publish(Tick, { n: i });
      await until(() => got.length === 5, "the first 5 messages");
      // The reader names its connection; killing it drops the blocked XREAD mid-wait.
      const killed = await killClients(`fw:kvstream:${prefix}`);
      assert.ok(killed >= 1, "the reader connection was found and killed");
      for (let i = 5; i < 40; i++) await publisher.publish(Tick, { n: i });
      await until(() => got.length >= 40, "the 35 messages published while it reconnected");
      await new Promise((r) => setTimeout(r, 50));
      assert.deepEqual(got, [...Array(40).keys()], "each message once, in order");
      assert.deepEqual(gaps, []);

      // A client that reconnects with the last id it saw is recovered.
      const again: number[] = [];
      const resumed = await subscriber.subscribe(Tick, (m) => void again.push(n(m)), {
        from: ids[29],
      });
      assert.equal(resumed.recovered, true);
      await until(() => again.length === 10, "the replay");
      assert.deepEqual(again, [30, 31, 32, 33, 34, 35, 36, 37, 38, 39]);
    } finally {
      await subscriber.close();
      await publisher.close();
    }
  });
});

Deno.test("kvStream() reports a cursor trimmed out of the window as not recovered", async () => {
  await withPrefix(async (prefix) => {
    const broker = kvStream({ url: URL, keyPrefix: prefix, maxLen: 5 });
    try {
      const ids: string[] = [];
      for (let i = 0; i < 250; i++) ids.push((await broker.publish(Tick, { n: i })).id);
      const got: number[] = [], gaps: RealtimeGap[] = [];
      const sub = await broker.subscribe(Tick, (m) => void got.push(n(m)), {
        from: ids[2],
        onGap: (g) => void gaps.push(g),
      });
      assert.equal(sub.recovered, false);
      assert.deepEqual(gaps, [{ topic: "tick", after: ids[2], reason: "trimmed" }]);
      await broker.publish(Tick, { n: 250 });
      await until(() => got.length === 1, "the live message");
      assert.deepEqual(got, [250], "nothing of the old window is replayed after a gap");
      // The newest ids are still retained.
      const recent: number[] = [];
      const ok = await broker.subscribe(Tick, (m) => void recent.push(n(m)), { from: ids[247] });
      assert.equal(ok.recovered, true);
      await until(() => recent.length === 3, "the retained tail");
      assert.deepEqual(recent, [248, 249, 250]);
    } finally {
      await broker.close();
    }
  });
});

Deno.test("kvStream() does not replay entries older than replayTtlMs", async () => {
  await withPrefix(async (prefix) => {
    const broker = kvStream({ url: URL, keyPrefix: prefix, replayTtlMs: 150 });
    try {
      const first = await broker.publish(Tick, { n: 1 });
      await broker.publish(Tick, { n: 2 });
      await new Promise((r) => setTimeout(r, 300)); // message 2 is now older than 150 ms
      const third = await broker.publish(Tick, { n: 3 });
      const gaps: RealtimeGap[] = [];
      const late = await broker.subscribe(Tick, () => {}, {
        from: first.id,
        onGap: (g) => void gaps.push(g),
      });
      assert.equal(late.recovered, false);
      assert.deepEqual(gaps.map((g) => g.reason), ["trimmed"]);
      const fresh = await broker.subscribe(Tick, () => {}, { from: third.id });
      assert.equal(fresh.recovered, true);
    } finally {
      await broker.close();
    }
  });
});

Deno.test("kvStream() refuses ids it never issued and treats a vanished stream as trimmed", async () => {
  await withPrefix(async (prefix) => {
    const broker = kvStream({ url: URL, keyPrefix: prefix });
    try {
      const m = await broker.publish(Tick, { n: 1 });
      const [ms, seq] = m.id.split("-").map(Number);
      for (const id of ["0-0", "12", "abc-1", `${ms}-${seq + 1}`, `${ms + 60_000}-0`]) {
        await assert.rejects(
          broker.subscribe(Tick, () => {}, { from: id }),
          (e: unknown) => e instanceof RealtimeCursorError && e.id === id,
          id,
        );
      }
      // The key is gone (flushed, expired): an id from the past cannot be replayed.
      const gaps: RealtimeGap[] = [];
      const sub = await broker.subscribe("no.such.topic", () => {}, {
        from: m.id,
        onGap: (g) => void gaps.push(g),
      });
      assert.equal(sub.recovered, false);
      assert.equal(gaps[0]?.reason, "trimmed");
      await assert.rejects(
        broker.subscribe("no.such.topic", () => {}, { from: `${ms + 60_000}-0` }),
        RealtimeCursorError,
      );
    } finally {
      await broker.close();
    }
  });
});

Deno.test("kvStream() logs a throwing callback and keeps one reader for many topics", async () => {
  await withPrefix(async (prefix) => {
    const sink = new MemorySink();
    const broker = kvStream({
      url: URL,
      keyPrefix: prefix,
      logger: createLogger({ sink, level: "debug" }),
    });
    const redis = await openRedis("test", { url: URL });
    try {
      const seen: string[] = [];
      await broker.subscribe("a", () => {
        throw new Error("boom");
      });
      for (const name of ["b", "c", "d"]) {
        await broker.subscribe(name, (m) => void seen.push(m.topic));
      }
      const sent = await broker.publish("a", { x: 1 });
      for (const name of ["b", "c", "d"]) await broker.publish(name, {});
      await until(() => seen.length === 3, "one message per topic");
      assert.deepEqual(seen.sort(), ["b", "c", "d"]);
      await until(() => sink.records.length > 0, "the log line");
      assert.equal(sink.records[0].message, "realtime subscriber failed");
      assert.equal(sink.records[0].fields.id, sent.id);
      const clients = String(await redis.main.sendCommand(["CLIENT", "LIST"]))
        .split("\n").filter((line) => line.includes(` name=fw:kvstream:${prefix} `));
      assert.equal(clients.length, 1, "one blocking reader for four topics");
    } finally {
      await broker.close();
      await redis.close();
    }
    await assert.rejects(broker.publish("a", {}), /Realtime broker is closed/);
  });
});

Deno.test("kvStream() rejects invalid options at creation naming them", () => {
  assert.throws(() => kvStream({}), /Invalid kvStream\(\) options: give either "url" or "client"/);
  assert.throws(
    () => kvStream({ url: "http://127.0.0.1:6379" }),
    /Invalid kvStream\(\) option "url"/,
  );
  assert.throws(
    () => kvStream({ url: URL, keyPrefix: "" }),
    /Invalid kvStream\(\) option "keyPrefix": expected a non-empty string/,
  );
  assert.throws(
    () => kvStream({ url: URL, maxLen: 0 }),
    /Invalid kvStream\(\) option "maxLen": expected an integer >= 1, got "0"/,
  );
  assert.throws(
    () => kvStream({ url: URL, replayTtlMs: -5 }),
    /Invalid kvStream\(\) option "replayTtlMs": expected a number > 0, got "-5"/,
  );
});

Deno.test("kvStream() fails start-up naming the address it cannot reach", async () => {
  const listener = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  const { port } = listener.addr as Deno.NetAddr;
  listener.close();
  const broker = kvStream({ url: `redis://127.0.0.1:${port}` });
  await assert.rejects(
    broker.start(),
    new RegExp(`^Error: kvStream\\(\\) cannot connect to Redis at redis://127\\.0\\.0\\.1:${port}`),
  );
  await assert.rejects(
    broker.publish("t", {}),
    /kvStream\(\) cannot connect to Redis at redis:\/\/127\.0\.0\.1/,
  );
  await broker.close();
});

/** A client of ours over a real one whose duplicates (the reader) can be held offline. */
function gated(real: RedisClient, gate: { open: Promise<void> }): RedisClient {
  return {
    sendCommand: async (args) => {
      await gate.open;
      return real.sendCommand(args);
    },
    duplicate: () => gated(real.duplicate(), gate),
    connect: () => real.connect(),
    close: () => real.close(),
    on: (event, listener) => real.on(event, listener),
  };
}

/** What a gated reader waits on: open until `hold()`, then until `release()`. */
class Gate {
  open: Promise<void> = Promise.resolve();
  #release = () => {};
  hold(): void {
    this.open = new Promise((resolve) => this.#release = resolve);
  }
  release(): void {
    this.#release();
  }
}

/**
 * A subscribing kvStream (maxLen 5) whose reader connection waits on `gate`, a publisher, and the
 * messages and gaps the subscriber gets; `client` replaces the subscriber's client.
 */
async function gatedStreams(
  prefix: string,
  client?: (main: RedisClient, gate: Gate) => RedisClient,
) {
  const redis = await openRedis("test", { url: URL });
  const gate = new Gate();
  const subscriber = kvStream({
    client: client?.(redis.main, gate) ?? {
      ...gated(redis.main, new Gate()),
      duplicate: () => gated(redis.main.duplicate(), gate),
    },
    keyPrefix: prefix,
    maxLen: 5,
  });
  const publisher = kvStream({ url: URL, keyPrefix: prefix, maxLen: 5 });
  const got: number[] = [], ids: string[] = [], gaps: RealtimeGap[] = [];
  return {
    gate,
    publisher,
    got,
    ids,
    gaps,
    /** Subscribes to `Tick`; `then` runs after each message is recorded. */
    subscribe: (then?: (n: number) => void) =>
      subscriber.subscribe(Tick, (m) => {
        got.push(n(m));
        ids.push(m.id);
        then?.(n(m));
      }, { onGap: (g) => void gaps.push(g) }),
    async publish(from: number, to: number) {
      for (let i = from; i <= to; i++) await publisher.publish(Tick, { n: i });
    },
    async close() {
      gate.release();
      await subscriber.close();
      await publisher.close();
      await redis.close();
    },
  };
}

// A read in flight fails when the connection goes; with none in flight (the reader holds its next
// read), node-redis reconnects on its own and no command fails: the gap is "disconnected" either way.
for (const inFlight of [true, false]) {
  Deno.test(
    `kvStream() reports messages trimmed while its reader was offline as a disconnected gap (${
      inFlight ? "a read in flight" : "between two reads"
    })`,
    async () => {
      await withPrefix(async (prefix) => {
        const s = await gatedStreams(prefix);
        try {
          await s.subscribe((i) => !inFlight && i === 0 && s.gate.hold());
          await s.publish(0, 0);
          await until(() => s.got.length === 1, "the first message");
          if (inFlight) s.gate.hold(); // the reader cannot come back yet
          assert.equal(await killClients(`fw:kvstream:${prefix}`), 1);
          await s.publish(1, 300);
          s.gate.release();
          await until(() => s.got.includes(300), "the newest message after the reconnect");
          assert.deepEqual(s.gaps, [{ topic: "tick", after: s.ids[0], reason: "disconnected" }]);
          assert.ok(!s.got.includes(1), "message 1 was trimmed while offline");
          const after = s.got.slice(1);
          assert.deepEqual(after, [...after].sort((a, b) => a - b), "the rest in order");
          assert.equal(new Set(after).size, after.length, "each once");
        } finally {
          await s.close();
        }
      });
    },
  );
}

Deno.test("kvStream() keeps a topic interrupted when the connection drops while a read's entries are handed out", async () => {
  await withPrefix(async (prefix) => {
    const info = new Gate();
    let infoHeld = false;
    const events: string[] = [];
    let readies = 0;
    const s = await gatedStreams(prefix, (main, gate) => ({
      ...gated(main, new Gate()),
      // the window check after a long read (XINFO, on the main connection) waits while held
      sendCommand: async (args: string[]) => {
        const reply = await main.sendCommand(args);
        if (args[0] === "XINFO") {
          infoHeld = true;
          await info.open;
        }
        return reply;
      },
      duplicate: (): RedisClient => {
        const reader = gated(main.duplicate(), gate);
        reader.on("ready", () => void readies++);
        return {
          ...reader,
          on: (event: string, listener: (...args: unknown[]) => void) =>
            reader.on(event, (...args: unknown[]) => {
              events.push(event);
              listener(...args);
            }),
        };
      },
    }));
    try {
      await s.subscribe((i) => i === 0 && s.gate.hold());
      await s.publish(0, 0);
      await until(() => s.got.length === 1, "the first message");
      // a read of maxLen entries: its window check is held, and the connection drops meanwhile
      await s.publish(1, 6);
      info.hold();
      s.gate.release();
      await until(() => infoHeld, "the window check");
      assert.equal(await killClients(`fw:kvstream:${prefix}`), 1);
      await until(() => events.length > 0, "the client noticing the drop");
      // node-redis connects again on its own: the next read will not fail
      await until(() => readies >= 2, "the reader's connection back");
      await s.publish(7, 306);
      info.release();
      await until(() => s.got.includes(306), "the newest message after the reconnect");
      assert.deepEqual(s.gaps.map((g) => g.reason), ["disconnected"]);
      assert.ok(!s.got.includes(7), "message 7 was trimmed while the reader was away");
    } finally {
      info.release();
      await s.close();
    }
  });
});

Deno.test("kvStream() delivers a burst larger than maxLen to a live subscriber without a gap", async () => {
  await withPrefix(async (prefix) => {
    const broker = kvStream({ url: URL, keyPrefix: prefix, maxLen: 5 });
    try {
      const got: number[] = [], gaps: RealtimeGap[] = [];
      await broker.subscribe(Tick, (m) => void got.push(n(m)), { onGap: (g) => void gaps.push(g) });
      await Promise.all([...Array(60).keys()].map((i) => broker.publish(Tick, { n: i })));
      await until(() => got.length === 60, "the burst");
      assert.deepEqual(got, [...Array(60).keys()]);
      assert.deepEqual(gaps, []);
    } finally {
      await broker.close();
    }
  });
});
