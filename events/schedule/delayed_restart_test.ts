/**
 * A delayed message survives the restart of both the publishing and the consuming process, on
 * every durable transport, against the real engines: a consumer subscribes, a publisher process
 * stores delayed messages and is killed, the consumer is killed before they are due, and a new
 * consumer process receives each of them once, none before its time.
 *
 * @module
 */

import assert from "node:assert/strict";
import { JsonLinesProcess } from "../testdata/child_process.ts";
import { openRedis } from "../_redis.ts";
import { dropSchemas } from "../transports/sql/testdata/pg_env.ts";
import { NatsJetStreamClient } from "../transports/cloud/nats_jetstream.ts";
import { NATS_ADDRESS, natsReachable } from "../transports/cloud/testdata/nats_server.ts";

const fixture = new URL("./testdata/delayed_process.ts", import.meta.url).pathname;
const config = new URL("../../deno.json", import.meta.url).pathname;
const COUNT = 5;
/** From the publisher's first publish to the due time: room to kill both processes under load. */
const LEAD_MS = 5_000;

interface Line {
  event: string;
  n?: number;
  at?: number;
  due?: number;
}

class Child extends JsonLinesProcess<Line> {
  constructor(kind: string, ns: string, role: string, lead = 0) {
    super([
      "--unstable-kv",
      "--config",
      config,
      fixture,
      kind,
      ns,
      role,
      String(COUNT),
      String(lead),
    ]);
  }
}

async function dropRedisKeys(prefix: string): Promise<void> {
  const redis = await openRedis("test", { url: "redis://127.0.0.1:6379" });
  try {
    const found = await redis.main.sendCommand(["KEYS", `${prefix}*`]) as string[];
    if (found.length) await redis.main.sendCommand(["DEL", ...found]);
  } finally {
    await redis.close();
  }
}

async function dropNats(stream: string): Promise<void> {
  const c = new NatsJetStreamClient({
    servers: NATS_ADDRESS,
    stream,
    subjectPrefix: stream.toLowerCase(),
  });
  try {
    await c.deleteStream();
  } finally {
    await c.close();
  }
}

const run = crypto.randomUUID().slice(0, 8);
const kinds: Array<
  { kind: string; ns: () => Promise<string>; drop: (ns: string) => Promise<void> }
> = [
  { kind: "redis", ns: () => Promise.resolve(`fwdelay:${run}:`), drop: dropRedisKeys },
  { kind: "sql", ns: () => Promise.resolve(`fw_delay_${run}`), drop: (s) => dropSchemas([s]) },
  { kind: "nats", ns: () => Promise.resolve(`FWDELAY_${run}`), drop: dropNats },
  {
    kind: "denokv",
    ns: async () => `${await Deno.makeTempDir({ prefix: "fw-delay-" })}/events.sqlite`,
    drop: (path) => Deno.remove(path.replace(/\/events\.sqlite$/, ""), { recursive: true }),
  },
];

const nats = await natsReachable();
if (!nats && Deno.env.get("CI")) {
  throw new Error(`NATS tests cannot run: nothing on ${NATS_ADDRESS}`);
}

for (const { kind, ns: nsOf, drop } of kinds) {
  Deno.test({
    name:
      `delayed publish on ${kind} survives a restart of the publishing and the consuming process`,
    ignore: kind === "nats" && !nats,
    sanitizeOps: false,
    sanitizeResources: false,
    fn: async () => {
      const ns = await nsOf();
      const children: Child[] = [];
      const start = (role: string, lead = 0) => {
        const c = new Child(kind, ns, role, lead);
        children.push(c);
        return c;
      };
      try {
        const first = start("consume");
        await first.next((l) => l.event === "ready", 30_000, "the first consumer");
        const publisher = start("publish", LEAD_MS);
        const due = (await publisher.next((l) => l.event === "published", 30_000, "publish")).due!;
        await publisher.kill();
        await first.kill();
        assert.ok(Date.now() < due, "both processes were gone before the messages were due");
        assert.deepEqual(first.lines.filter((l) => l.event === "handled"), []);
        const second = start("consume");
        await second.next(
          () => second.lines.filter((l) => l.event === "handled" && l.n! >= 0).length >= COUNT,
          60_000,
          "the delayed messages in the restarted consumer",
        );
        await new Promise((r) => setTimeout(r, 500));
        const handled = second.lines.filter((l) => l.event === "handled" && l.n! >= 0);
        assert.deepEqual(handled.map((l) => l.n).sort(), [...Array(COUNT).keys()], "each once");
        for (const l of handled) {
          assert.ok(l.at! >= due, `message ${l.n} came ${due - l.at!} ms early`);
        }
      } finally {
        for (const c of children) await c.kill();
        await drop(ns);
      }
    },
  });
}
