/**
 * `redisRateLimitStore()` on a Redis Cluster (issue 31): three masters with a replica each,
 * started by the Redis Streams test helper on free ports and given as the list of node URLs.
 * Counters of different routes live on different shards; after the master of a counter is
 * SIGKILLed and its replica promoted, the store finds the new master by itself.
 *
 * @module
 */

import assert from "node:assert/strict";
import { redisRateLimitStore } from "../application/policies/redis_rate_limit.ts";
import { RedisCluster } from "../events/transports/redis_streams/testdata/redis_cluster.ts";

async function slotOf(port: number, key: string): Promise<number> {
  const out = await new Deno.Command("redis-cli", {
    args: ["-p", String(port), "-a", "rl-secret", "--no-auth-warning", "cluster", "keyslot", key],
    stdout: "piped",
  }).output();
  return Number(new TextDecoder().decode(out.stdout).trim());
}

Deno.test({
  name:
    "redisRateLimitStore() on a Redis Cluster shares counters across stores and recovers after a master fails over",
  sanitizeOps: false,
  sanitizeResources: false,
  fn: async () => {
    const cluster = await RedisCluster.start({ masters: 3, replicas: 1, password: "rl-secret" });
    const prefix = "rl:";
    const a = redisRateLimitStore({ url: cluster.urls, prefix });
    const b = redisRateLimitStore({ url: cluster.urls, prefix });
    try {
      const keys = Array.from({ length: 6 }, (_, i) => `GET /r${i}|10.0.0.1`);
      for (const key of keys) {
        assert.equal((await a.hit(key, 60_000)).count, 1);
        assert.equal((await b.hit(key, 60_000)).count, 2);
      }
      // One node's URL alone: the store notices the cluster and uses a cluster client.
      const c = redisRateLimitStore({ url: cluster.urls[2], prefix });
      try {
        for (const key of keys) assert.equal((await c.hit(key, 60_000)).count, 3);
      } finally {
        await c.close();
      }
      const masters = new Set<number>();
      for (const key of keys) {
        masters.add(await cluster.masterOf(await slotOf(cluster.nodes[0].port, prefix + key)));
      }
      assert.ok(masters.size > 1, "the counters spread over the shards");

      const victim = await cluster.masterOf(await slotOf(cluster.nodes[0].port, prefix + keys[0]));
      await cluster.kill(victim);
      await cluster.waitFailover(victim);
      // A hit may fail while the store learns the new topology (the route answers 500); it then
      // counts again on the promoted replica.
      const hitSoon = async (store: typeof a, key: string) => {
        for (let i = 0;; i++) {
          try {
            return (await store.hit(key, 60_000)).count;
          } catch (error) {
            if (i === 50) throw error;
            await new Promise((r) => setTimeout(r, 100));
          }
        }
      };
      assert.ok(await hitSoon(a, keys[0]) >= 1, "the store counts again after the failover");
      // Every other counter counts too, whichever shard it is on.
      for (const key of keys.slice(1)) assert.ok(await hitSoon(b, key) >= 1);
    } finally {
      await a.close();
      await b.close();
      await cluster.destroy();
    }
  },
});
