import assert from "node:assert/strict";
import { createLogger, Int, MemoryMeter, MemorySink } from "@fw/runtime";
import { EventBus } from "../../event_bus.ts";
import { handler } from "../../handler.ts";
import type { HandlerOptions } from "../../handler_types.ts";
import { getPublisher } from "../../publisher.ts";
import { topic } from "../../topic.ts";
import { runTransportConformance } from "../conformance.ts";
import { CloudPubSubTransport, type CloudPubSubTransportOptions } from "./cloud_pubsub.ts";
import { NatsJetStreamClient, type NatsJetStreamClientOptions } from "./nats_jetstream.ts";
import { NATS_ADDRESS, natsReachable } from "./testdata/nats_server.ts";

const reachable = await natsReachable();
if (!reachable) {
  const reason = `no NATS server answers on ${NATS_ADDRESS} (start nats-server -js)`;
  if (Deno.env.get("CI")) throw new Error(`NATS tests cannot run: ${reason}`);
  console.log(`skipping the NATS JetStream tests: ${reason}`);
}

const streamOf = (ns: string) => `FWT_${ns.replace(/[^A-Za-z0-9_-]/g, "_")}`;

function natsClient(stream: string, extra: Partial<NatsJetStreamClientOptions> = {}) {
  return new NatsJetStreamClient({
    servers: NATS_ADDRESS,
    stream,
    subjectPrefix: stream.toLowerCase(),
    ackWaitMs: 5000,
    ...extra,
  });
}

async function dropStream(stream: string): Promise<void> {
  const c = natsClient(stream);
  try {
    await c.deleteStream();
  } finally {
    await c.close();
  }
}

if (reachable) {
  runTransportConformance("CloudPubSubTransport(NATS JetStream)", {
    create: (ns) => new CloudPubSubTransport({ client: natsClient(streamOf(ns)) }),
    cleanup: async (namespaces) => {
      for (const ns of namespaces) await dropStream(streamOf(ns));
    },
    timeoutMs: 10_000,
  });
}

const Job = topic("nats.job", { n: Int });
const FAST: HandlerOptions = { maxBackoff: 20, jitter: 0, timeout: 2000 };

async function until(check: () => boolean | Promise<boolean>, ms: number, what: string) {
  const end = Date.now() + ms;
  while (!(await check())) {
    if (Date.now() > end) throw new Error(`Timed out after ${ms} ms waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 10));
  }
}

/** One test's stream, buses and clients, removed afterwards. */
class World {
  readonly stream = `FWT_${crypto.randomUUID().slice(0, 8)}`;
  readonly sink = new MemorySink();
  readonly meter = new MemoryMeter();
  readonly clients: NatsJetStreamClient[] = [];
  readonly #buses: EventBus[] = [];

  client(): NatsJetStreamClient {
    const c = natsClient(this.stream);
    this.clients.push(c);
    return c;
  }

  bus(options: Partial<CloudPubSubTransportOptions> = {}): EventBus {
    const transport = new CloudPubSubTransport({ client: this.client(), ...options });
    const bus = new EventBus({
      transports: { nats: transport },
      logger: createLogger({ sink: this.sink, level: "debug" }),
      meter: this.meter,
    });
    this.#buses.push(bus);
    return bus;
  }

  async close(): Promise<void> {
    for (const b of this.#buses) await b.stop();
    await dropStream(this.stream);
    for (const c of this.clients) await c.close();
  }
}

function natsTest(name: string, fn: (w: World) => Promise<void>): void {
  Deno.test({
    name,
    ignore: !reachable,
    fn: async () => {
      const w = new World();
      try {
        await fn(w);
      } finally {
        await w.close();
      }
    },
  });
}

natsTest(
  "CloudPubSubTransport dead-letters once when the delivery limit comes before maxRetries",
  async (w) => {
    const bus = w.bus({ maxDeliveries: 2 });
    let calls = 0;
    await bus.add(
      handler(Job).options({ ...FAST, group: "limited", maxRetries: 5 }).handle(() => {
        calls++;
        throw new Error("broken");
      }),
    );
    await bus.start();
    await getPublisher(Job, { bus })({ n: 1 }, { messageId: "limit-1" });
    await until(async () => (await bus.deadLetters()).length === 1, 10_000, "the dead letter");
    await new Promise((r) => setTimeout(r, 300));
    assert.equal(calls, 2);
    const dead = await bus.deadLetters();
    assert.equal(dead.length, 1, "exactly one terminal record");
    const e = dead[0].envelope;
    assert.equal(e.id, "limit-1");
    assert.equal(e.topic, "nats.job.dlq");
    assert.deepEqual(e.payload, { n: 1 });
    assert.equal(e.attributes["dlq.attempts"], "2");
    assert.equal(e.attributes["dlq.original_topic"], "nats.job");
    assert.match(e.attributes["dlq.error"], /delivery limit reached: attempt 2 of 2 failed/);
  },
);

natsTest(
  "CloudPubSubTransport dead-letters a foreign or non-JSON message with the reason",
  async (w) => {
    const bus = w.bus();
    const seen: number[] = [];
    await bus.add(
      handler(Job).options({ ...FAST, group: "g" }).handle((m) => void seen.push(m.payload.n)),
    );
    await bus.start();
    const raw = w.client();
    await raw.publish("nats.job", new TextEncoder().encode("hello"), {
      attributes: { origin: "x" },
    });
    await raw.publish("nats.job", new TextEncoder().encode("{not json"), {
      attributes: { "fw.envelope": "1", "fw.id": "broken-1" },
    });
    await getPublisher(Job, { bus })({ n: 5 });
    await until(
      async () => (await bus.deadLetters()).length === 2 && seen.length === 1,
      10_000,
      "both",
    );
    const dead = (await bus.deadLetters()).map((d) => d.envelope);
    const foreign = dead.find((e) => e.attributes.origin === "x")!;
    assert.match(foreign.attributes["dlq.error"], /foreign message: no fw attributes/);
    assert.equal(foreign.payload, "hello");
    assert.equal(foreign.topic, "nats.job.dlq");
    const broken = dead.find((e) => e.id === "broken-1")!;
    assert.match(broken.attributes["dlq.error"], /malformed message body: not JSON/);
    assert.deepEqual(seen, [5]);
  },
);

natsTest(
  "CloudPubSubTransport carries attributes with any characters and counts attempts",
  async (w) => {
    const bus = w.bus();
    const got: { attrs: Record<string, string>; attempt: number }[] = [];
    await bus.add(
      handler(Job).options({ ...FAST, group: "g" }).handle((m) => {
        got.push({ attrs: { ...m.attributes }, attempt: m.attempt });
        if (m.attempt === 1) throw new Error("once");
      }),
    );
    await bus.start();
    const attributes = { "a b": " spaced: ü% ", "dlq.x": "y", "Nats-Like": "z" };
    await getPublisher(Job, { bus })({ n: 1 }, { attributes });
    await until(() => got.length === 2, 10_000, "two attempts");
    assert.deepEqual(got.map((g) => g.attempt), [1, 2]);
    for (const g of got) {
      assert.equal(g.attrs["a b"], " spaced: ü% ");
      assert.equal(g.attrs["dlq.x"], "y");
      assert.equal(g.attrs["Nats-Like"], "z");
    }
  },
);

natsTest(
  "CloudPubSubTransport removes a broadcast instance's subscription when it leaves",
  async (w) => {
    const bus = w.bus();
    await bus.add(
      handler(Job).options({ ...FAST, group: "cache", distribution: "broadcast" }).handle(() => {}),
    );
    await bus.start();
    const probe = w.client();
    assert.equal(await probe.hasSubscriptions("nats.job"), true);
    await bus.stop({ closeTransports: false });
    assert.equal(await probe.hasSubscriptions("nats.job"), false);
  },
);

natsTest("CloudPubSubTransport needs a group on every handler at start-up", async (w) => {
  const bus = w.bus();
  await assert.rejects(
    bus.add(handler(Job).options(FAST).handle(() => {})),
    /needs a stable "group" option: transport "nats" is external/,
  );
});

Deno.test("natsJetStreamClient fails at first use naming the address it cannot reach", async () => {
  const client = new NatsJetStreamClient({ servers: "127.0.0.1:1" });
  try {
    await assert.rejects(
      client.publish("a", new Uint8Array(), { attributes: {} }),
      /Cannot connect to NATS at "127\.0\.0\.1:1"/,
    );
  } finally {
    await client.close();
  }
});

Deno.test("natsJetStreamClient refuses bad options at creation", () => {
  assert.throws(() => new NatsJetStreamClient({}), /exactly one of "servers" and "connection"/);
  assert.throws(
    () => new NatsJetStreamClient({ servers: "x:1", stream: "a.b" }),
    /option "stream": expected letters, digits/,
  );
  assert.throws(
    () => new NatsJetStreamClient({ servers: "x:1", ackWaitMs: 5 }),
    /option "ackWaitMs": expected an integer >= 100, got 5/,
  );
  assert.throws(
    () => new NatsJetStreamClient({ servers: "x:1", replicas: 7 }),
    /option "replicas": expected an integer from 1 to 5, got 7/,
  );
  assert.throws(
    () => new NatsJetStreamClient({ servers: "x:1", replicas: 0 }),
    /option "replicas": expected an integer from 1 to 5, got 0/,
  );
});

natsTest(
  "CloudPubSubTransport stores a repeated dedupeKey once (JetStream's window)",
  async (w) => {
    const bus = w.bus();
    const seen: number[] = [];
    await bus.add(
      handler(Job).options({ ...FAST, group: "g" }).handle((m) => void seen.push(m.payload.n)),
    );
    await bus.start();
    const publish = getPublisher(Job, { bus });
    await publish({ n: 1 }, { dedupeKey: "order-7" });
    await publish({ n: 2 }, { dedupeKey: "order-7" });
    await publish({ n: 3 });
    await until(() => seen.length >= 2, 10_000, "two deliveries");
    await new Promise((r) => setTimeout(r, 300));
    assert.deepEqual([...seen].sort(), [1, 3]);
  },
);

Deno.test({
  name: "natsJetStreamClient with replicas 3 on a single server fails at first use, saying why",
  ignore: !reachable,
  fn: async () => {
    const stream = `FWT_R3_${crypto.randomUUID().slice(0, 8)}`;
    const client = natsClient(stream, { replicas: 3 });
    try {
      await assert.rejects(
        client.publish("nats.job", new Uint8Array(), { attributes: {} }),
        new RegExp(
          `Cannot use JetStream stream "${stream}" on NATS at .*replicas > 1 not supported`,
        ),
      );
    } finally {
      await client.close();
    }
  },
});
