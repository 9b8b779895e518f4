/**
 * The transport conformance suite on a Redis Cluster of three masters that this file starts
 * (`testdata/redis_cluster.ts`: free ports, temp dir), given to fw as the list of node URLs, with
 * one stream per topic and with three partitions per topic. The last test stops the cluster.
 *
 * @module
 */

import assert from "node:assert/strict";
import { createLogger, Int, MemorySink } from "@fw/runtime";
import { EventBus } from "../../event_bus.ts";
import { handler } from "../../handler.ts";
import { getPublisher } from "../../publisher.ts";
import { type Topic, topic } from "../../topic.ts";
import { runTransportConformance } from "../conformance.ts";
import { KvStreamTransport } from "./redis_streams.ts";
import { RedisCluster } from "./testdata/redis_cluster.ts";

// With a password: the nodes fw discovers from the URLs need the URLs' credentials too.
const cluster = await RedisCluster.start({ masters: 3, password: "cluster-secret" });
const run = crypto.randomUUID().slice(0, 8);

runTransportConformance("KvStreamTransport on a Redis Cluster", {
  create: (ns) => new KvStreamTransport({ url: cluster.urls, keyPrefix: `fwtest:${run}:${ns}:` }),
  timeoutMs: 15_000,
});

runTransportConformance("KvStreamTransport on a Redis Cluster with 3 partitions", {
  create: (ns) =>
    new KvStreamTransport({
      url: cluster.urls,
      keyPrefix: `fwtest:${run}:p:${ns}:`,
      partitions: 3,
    }),
  timeoutMs: 15_000,
});

/**
 * Publishes one message to each of `topics` through `transport` (one competing group each) and
 * returns the topics that were handled, sorted; closes the transport.
 */
async function handledTopics(transport: KvStreamTransport, topics: Topic[]): Promise<string[]> {
  const bus = new EventBus({
    transports: { redis: transport },
    logger: createLogger({ sink: new MemorySink() }),
  });
  const seen: string[] = [];
  try {
    for (const t of topics) {
      await bus.add(handler(t).options({ group: "g" }).handle((m) => void seen.push(m.topic)));
    }
    await bus.start();
    for (const t of topics) await getPublisher(t, { bus })({ n: 1 });
    const end = Date.now() + 10_000;
    while (seen.length < topics.length && Date.now() < end) {
      await new Promise((r) => setTimeout(r, 20));
    }
    return seen.sort();
  } finally {
    await bus.stop();
    await transport.close();
  }
}

Deno.test("kvStreamTransport on a Redis Cluster spreads topics over the masters", async () => {
  const topics = Array.from({ length: 6 }, (_, i) => topic(`rc.spread${i}`, { n: Int }));
  const prefix = `fwtest:${run}:spread:`;
  const seen = await handledTopics(
    new KvStreamTransport({ url: cluster.urls, keyPrefix: prefix }),
    topics,
  );
  assert.deepEqual(seen, topics.map((t) => t.name).sort());
  // The topic streams live on more than one master.
  const owners = new Set<number>();
  for (const t of topics) owners.add(await cluster.masterOf(await slotOf(`${prefix}{${t.name}}`)));
  assert.ok(owners.size > 1, `every topic on one master: ${[...owners]}`);
});

Deno.test("kvStreamTransport given a single node's URL of a cluster runs on the whole cluster", async () => {
  const topics = Array.from({ length: 4 }, (_, i) => topic(`rc.one${i}`, { n: Int }));
  const transport = new KvStreamTransport({
    url: cluster.urls[1],
    keyPrefix: `fwtest:${run}:one:`,
  });
  assert.deepEqual(await handledTopics(transport, topics), topics.map((t) => t.name));
});

Deno.test("kvStreamTransport takes a node-redis cluster client of the user's and leaves it open", async () => {
  // The user's own client, as an application creates it (fw imports npm redis in _redis.ts only).
  const { createCluster } = await import("redis");
  const client = createCluster({
    rootNodes: [{ url: cluster.urls[0] }],
    defaults: { password: cluster.password },
  });
  await client.connect();
  const Job = topic("rc.own", { n: Int });
  const transport = new KvStreamTransport({ client, keyPrefix: `fwtest:${run}:own:` });
  const bus = new EventBus({
    transports: { redis: transport },
    logger: createLogger({ sink: new MemorySink() }),
  });
  const seen: number[] = [];
  try {
    await bus.add(handler(Job).options({ group: "g" }).handle((m) => void seen.push(m.payload.n)));
    await bus.start();
    await getPublisher(Job, { bus })({ n: 5 });
    const end = Date.now() + 10_000;
    while (seen.length < 1 && Date.now() < end) await new Promise((r) => setTimeout(r, 20));
    assert.deepEqual(seen, [5]);
    await bus.stop();
    await transport.close();
    assert.equal(await client.sendCommand(undefined, false, ["PING"]), "PONG", "still open");
  } finally {
    await transport.close();
    await client.close();
  }
});

async function slotOf(key: string): Promise<number> {
  const out = await new Deno.Command("redis-cli", {
    args: [
      "-p",
      String(cluster.nodes[0].port),
      "-a",
      "cluster-secret",
      "--no-auth-warning",
      "cluster",
      "keyslot",
      key,
    ],
    stdout: "piped",
  }).output();
  return Number(new TextDecoder().decode(out.stdout).trim());
}

Deno.test("Redis Cluster test servers stop", async () => {
  await cluster.destroy();
});
