/**
 * The dashboard's JSON API on the real engines: the Queues view reads the engine (`inspect()`:
 * three messages held by a busy handler are counted, then none), dead letters appear with their
 * fields, redrive by topic brings them back to a handler that now succeeds, and discard deletes. Redis, PostgreSQL and NATS on loopback; Deno KV in memory.
 */

import assert from "node:assert/strict";
import { application } from "@fw/application";
import { dashboard } from "@fw/dashboard";
import { events, getPublisher, handler, Int, topic, type Transport } from "@fw/events";
import { cloudPubSubTransport } from "@fw/events/cloud";
import { NatsJetStreamClient } from "@fw/events/cloud-nats";
import { denoKvTransport } from "@fw/events/denokv";
import { kvStreamTransport } from "@fw/events/kvstore";
import { sqlTransport } from "@fw/events/sql";
import { createLogger } from "@fw/runtime";
import { dropSchemas, PG_URL, randomSchema } from "../events/transports/sql/testdata/pg_env.ts";
import { NATS_ADDRESS, natsReachable } from "../events/transports/cloud/testdata/nats_server.ts";
import { dropRedisPrefix } from "./_dashboard_page.ts";
import { eventually, post } from "./_shop.ts";

const Paid = topic("dash.paid", { n: Int });
const run = crypto.randomUUID().replaceAll("-", "").slice(0, 10);

interface Engine {
  transport: () => Transport;
  cleanup: () => Promise<void>;
  /** The engine counts messages not yet acknowledged (Deno KV cannot list its queue). */
  counts: boolean;
}

interface QueueFigures {
  topic: string;
  group: string;
  waiting?: number;
  inFlight?: number;
}

async function apiOn(name: string, engine: Engine): Promise<void> {
  const state = { failing: false, handled: 0, hold: undefined as Promise<void> | undefined };
  const app = application({ logger: createLogger({ level: "silent" }) })
    .use(dashboard({ secure: false }))
    .use(events({
      autoScan: false,
      brokerPort: false,
      transport: engine.transport(),
      handlers: [
        handler(Paid).options({ group: "ledger", maxRetries: 0, timeout: 10_000 }).handle(
          async () => {
            await state.hold;
            if (state.failing) throw new Error("ledger offline");
            state.handled++;
          },
        ),
      ],
    }));
  await app.start();
  try {
    const list = async (q = "") => await (await app.request(`/_fw/api/dead-letters${q}`)).json();
    const ledgerQueue = async (): Promise<QueueFigures | undefined> => {
      const t = (await (await app.request("/_fw/api/queues")).json()).transports[0];
      return t.queues.find((q: QueueFigures) => q.topic === "dash.paid" && q.group === "ledger");
    };
    const unacked = (q: QueueFigures | undefined) => (q?.waiting ?? 0) + (q?.inFlight ?? 0);
    const publish = getPublisher(Paid);

    // a backlog the engine tells: three messages held by a busy handler, then none
    let release!: () => void;
    state.hold = new Promise((resolve) => release = resolve);
    for (let n = 101; n <= 103; n++) await publish({ n });
    if (engine.counts) {
      const busy = await eventually(async () => {
        const q = await ledgerQueue();
        return unacked(q) === 3 && (q?.inFlight ?? 0) >= 1 ? q : undefined;
      }, `three unacknowledged messages in the Queues view on ${name}`);
      assert.equal(typeof busy!.waiting, "number", `${name}: ${JSON.stringify(busy)}`);
    }
    release();
    await eventually(() => state.handled === 3, `the held messages handled on ${name}`);
    if (engine.counts) {
      await eventually(async () => unacked(await ledgerQueue()) === 0, `an empty queue on ${name}`);
    }
    state.handled = 0;
    state.failing = true;

    for (let n = 1; n <= 3; n++) await publish({ n });
    const page = await eventually(async () => {
      const p = await list("?topic=dash.paid");
      return p.total === 3 ? p : undefined;
    }, `three dead letters on ${name}`);
    assert.deepEqual(page.items.map((i: { payload: { n: number } }) => i.payload.n).sort(), [
      1,
      2,
      3,
    ]);
    const item = page.items[0];
    assert.equal(item.topic, "dash.paid");
    assert.equal(item.attempts, 1);
    assert.equal(item.error, "ledger offline");
    assert.equal(item.handler, "ledger");

    const queues = (await (await app.request("/_fw/api/queues")).json()).transports;
    assert.equal(queues.length, 1);
    assert.equal(item.transport, queues[0].transport);
    assert.equal(queues[0].inspectable, true, `${name} tells its queues`);
    const ledger = queues[0].queues.find((q: { topic: string; group: string }) =>
      q.topic === "dash.paid" && q.group === "ledger"
    );
    assert.ok(ledger, `${name}: the ledger group is listed: ${JSON.stringify(queues[0])}`);

    state.failing = false;
    const moved = await app.request("/_fw/api/dead-letters/redrive", post({ topic: "dash.paid" }));
    assert.deepEqual(await moved.json(), { moved: 3 });
    await eventually(() => state.handled === 3, `three redriven messages handled on ${name}`);
    assert.equal((await list()).total, 0);

    state.failing = true;
    await publish({ n: 4 });
    const one = await eventually(async () => {
      const p = await list();
      return p.total === 1 ? p : undefined;
    }, `one more dead letter on ${name}`);
    const gone = await app.request(
      "/_fw/api/dead-letters/discard",
      post({ ids: [one.items[0].id] }),
    );
    assert.deepEqual(await gone.json(), { moved: 1 });
    assert.equal((await list()).total, 0);
  } finally {
    await app.stop();
    await engine.cleanup();
  }
}

Deno.test("dashboard API on Deno KV: dead letters, queues, redrive by topic, discard", async () => {
  await apiOn("Deno KV", {
    transport: () => denoKvTransport({ path: ":memory:", keyPrefix: `dash-${run}` }),
    cleanup: () => Promise.resolve(),
    counts: false,
  });
});

Deno.test("dashboard API on Redis Streams: dead letters, queues, redrive by topic, discard", async () => {
  const prefix = `fwtest:dash:${run}:`;
  await apiOn("Redis", {
    transport: () => kvStreamTransport({ url: "redis://127.0.0.1:6379", keyPrefix: prefix }),
    cleanup: async () => {
      await dropRedisPrefix("redis://127.0.0.1:6379", prefix);
    },
    counts: true,
  });
});

Deno.test("dashboard API on PostgreSQL: dead letters, queues, redrive by topic, discard", async () => {
  const schema = randomSchema("dash");
  await apiOn("PostgreSQL", {
    transport: () => sqlTransport({ url: PG_URL, schema }),
    cleanup: () => dropSchemas([schema]),
    counts: true,
  });
});

Deno.test({
  name: "dashboard API on NATS JetStream: dead letters, queues, redrive by topic, discard",
  ignore: !(await natsReachable()) && !Deno.env.get("CI"),
  fn: async () => {
    const stream = `FWT_DASH_${run}`;
    const client = () =>
      new NatsJetStreamClient({
        servers: NATS_ADDRESS,
        stream,
        subjectPrefix: stream.toLowerCase(),
        ackWaitMs: 5000,
      });
    await apiOn("NATS", {
      transport: () => cloudPubSubTransport({ client: client() }),
      cleanup: async () => {
        const c = client();
        try {
          await c.deleteStream();
        } finally {
          await c.close();
        }
      },
      counts: true,
    });
  },
});
