/**
 * The realtime conformance suite for `kvStream` and `kvPubSub` on a Redis Cluster of three
 * masters that this file starts (free ports, temp dir), given as the list of node URLs. The last
 * test stops the cluster.
 *
 * @module
 */

import assert from "node:assert/strict";
import { keySlot } from "../_redis_cluster.ts";
import { RedisCluster } from "../transports/redis_streams/testdata/redis_cluster.ts";
import { runRealtimeConformance } from "./conformance.ts";
import { kvPubSub } from "./kv_pubsub.ts";
import { kvStream } from "./kv_stream.ts";

const cluster = await RedisCluster.start({ masters: 3 });
const run = crypto.randomUUID().slice(0, 8);

runRealtimeConformance("kvStream on a Redis Cluster", {
  create: (ns, { maxLen }) =>
    kvStream({ url: cluster.urls, keyPrefix: `fwtest:${run}:${ns}:`, maxLen }),
});

runRealtimeConformance("kvPubSub on a Redis Cluster", {
  create: (ns) => kvPubSub({ url: cluster.urls, keyPrefix: `fwtest:${run}:${ns}:` }),
});

Deno.test("keySlot() agrees with CLUSTER KEYSLOT, hash tags included", async () => {
  for (const key of ["a", "fw:{orders.created}:retries:billing", "x{}y", "{a}{b}", "tick", "é"]) {
    const out = await new Deno.Command("redis-cli", {
      args: ["-p", String(cluster.nodes[0].port), "cluster", "keyslot", key],
      stdout: "piped",
    }).output();
    assert.equal(keySlot(key), Number(new TextDecoder().decode(out.stdout).trim()), key);
  }
});

Deno.test("Redis Cluster test servers stop (realtime)", async () => {
  await cluster.destroy();
});
