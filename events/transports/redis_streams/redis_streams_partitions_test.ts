/**
 * Partitioned topics on the Redis Streams transport (`partitions`): the conformance suite with
 * every topic spread over three streams, order by `key`, and the option checks.
 *
 * @module
 */

import assert from "node:assert/strict";
import { createLogger, Int, MemorySink } from "@fw/runtime";
import { openRedis } from "../../_redis.ts";
import { EventBus } from "../../event_bus.ts";
import { handler } from "../../handler.ts";
import { getPublisher } from "../../publisher.ts";
import { topic } from "../../topic.ts";
import { runTransportConformance } from "../conformance.ts";
import { KvStreamTransport } from "./redis_streams.ts";

const URL = "redis://127.0.0.1:6379";
const run = crypto.randomUUID().slice(0, 8);
const prefixOf = (ns: string) => `fwtest:${run}:p:${ns}:`;

/** Deletes every key under a prefix. */
async function dropKeys(prefix: string): Promise<void> {
  const redis = await openRedis("test", { url: URL });
  try {
    let cursor = "0";
    do {
      const [next, found] = await redis.main.sendCommand(
        ["SCAN", cursor, "MATCH", `${prefix}*`, "COUNT", "1000"],
      ) as [string, string[]];
      cursor = next;
      if (found.length) await redis.main.sendCommand(["DEL", ...found]);
    } while (cursor !== "0");
  } finally {
    await redis.close();
  }
}

runTransportConformance("KvStreamTransport with 3 partitions", {
  create: (ns) => new KvStreamTransport({ url: URL, keyPrefix: prefixOf(ns), partitions: 3 }),
  cleanup: async (namespaces) => {
    for (const ns of namespaces) await dropKeys(prefixOf(ns));
  },
  timeoutMs: 10_000,
});

const Job = topic("part.job", { n: Int });

Deno.test("kvStreamTransport partitions: the same key keeps its order in one partition; keys spread over the partitions", async () => {
  const prefix = prefixOf("order");
  const transport = new KvStreamTransport({
    url: URL,
    keyPrefix: prefix,
    partitions: { "part.job": 3 },
  });
  const bus = new EventBus({
    transports: { redis: transport },
    logger: createLogger({ sink: new MemorySink() }),
  });
  const redis = await openRedis("test", { url: URL });
  const seen = new Map<string, number[]>();
  try {
    await bus.add(
      handler(Job).options({ group: "g", concurrency: 1 }).handle((m) => {
        const list = seen.get(m.key!) ?? [];
        list.push(m.payload.n);
        seen.set(m.key!, list);
      }),
    );
    await bus.start();
    const publish = getPublisher(Job, { bus });
    const keys = Array.from({ length: 8 }, (_, i) => `customer-${i}`);
    for (let n = 0; n < 20; n++) {
      await Promise.all(keys.map((key) => publish({ n }, { key })));
    }
    const end = Date.now() + 15_000;
    const total = () => [...seen.values()].reduce((a, l) => a + l.length, 0);
    while (total() < 160 && Date.now() < end) await new Promise((r) => setTimeout(r, 20));
    for (const key of keys) {
      assert.deepEqual(seen.get(key), Array.from({ length: 20 }, (_, n) => n), key);
    }
    // Each key's messages sit in one stream; the keys use more than one of the three.
    const used = new Set<number>();
    for (let i = 0; i < 3; i++) {
      const stream = `${prefix}{part.job${i === 0 ? "" : `#${i}`}}`;
      const entries = await redis.main.sendCommand(["XRANGE", stream, "-", "+"]) as [
        string,
        string[],
      ][];
      if (entries.length > 0) used.add(i);
      const keysHere = new Set(entries.map(([, f]) => JSON.parse(f[1]).key));
      for (const key of keysHere) {
        for (let j = 0; j < 3; j++) {
          if (j === i) continue;
          const other = await redis.main.sendCommand(
            ["XRANGE", `${prefix}{part.job${j === 0 ? "" : `#${j}`}}`, "-", "+"],
          ) as [string, string[]][];
          assert.ok(
            !other.some(([, f]) => JSON.parse(f[1]).key === key),
            `${key} in one partition`,
          );
        }
      }
    }
    assert.ok(used.size > 1, "the keys spread over the partitions");
    const stats = await transport.inspect();
    assert.deepEqual(
      stats.filter((s) => s.topic === "part.job").map((s) => s.details?.partition).sort(),
      [0, 1, 2],
    );
  } finally {
    await bus.stop();
    await transport.close();
    await redis.close();
    await dropKeys(prefix);
  }
});

Deno.test("kvStreamTransport() refuses bad partitions naming the option", () => {
  for (const partitions of [0, 1.5, 2000, { "a.b": 0 }, [3]]) {
    assert.throws(
      // deno-lint-ignore no-explicit-any
      () => new KvStreamTransport({ url: URL, partitions: partitions as any }),
      /option "partitions"/,
      JSON.stringify(partitions),
    );
  }
  assert.throws(
    () => new KvStreamTransport({ url: URL, keyPrefix: "a{b}:" }),
    /option "keyPrefix": "a\{b\}:" has a "\{"/,
  );
});
