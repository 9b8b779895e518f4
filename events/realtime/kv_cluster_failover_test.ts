/**
 * The Redis realtime brokers through a Redis Cluster failover: three masters with a replica each
 * (started on free ports); the master that serves the topic is killed with SIGKILL and its replica
 * takes over. `kvStream` resumes after the last id it read (nothing published after the failover is
 * missed, nothing comes twice); `kvPubSub` subscribes again on the new master and reports the gap.
 *
 * @module
 */

import assert from "node:assert/strict";
import { keySlot } from "../_redis_cluster.ts";
import { RedisCluster } from "../transports/redis_streams/testdata/redis_cluster.ts";
import { kvPubSub } from "./kv_pubsub.ts";
import { kvStream } from "./kv_stream.ts";
import type { RealtimeGap } from "./realtime.ts";
import { until } from "./testdata/redis_support.ts";

Deno.test({
  name:
    "kvStream and kvPubSub on a Redis Cluster carry on after the topic's master is SIGKILLed and its replica promoted",
  sanitizeOps: false,
  sanitizeResources: false,
  fn: async () => {
    const cluster = await RedisCluster.start({ masters: 3, replicas: 1 });
    const prefix = "rtfo:";
    // A channel name whose key hashes to the same master as the stream's.
    const streamMaster = await cluster.masterOf(keySlot(`${prefix}ticks`));
    let channel = "prices";
    for (let i = 0; (await cluster.masterOf(keySlot(prefix + channel))) !== streamMaster; i++) {
      channel = `prices${i}`;
    }
    const streams = [
      kvStream({ url: cluster.urls, keyPrefix: prefix }),
      kvStream({
        url: cluster.urls,
        keyPrefix: prefix,
      }),
    ];
    const pubsubs = [
      kvPubSub({ url: cluster.urls, keyPrefix: prefix }),
      kvPubSub({
        url: cluster.urls,
        keyPrefix: prefix,
      }),
    ];
    try {
      const ticks: number[] = [], prices: number[] = [], gaps: RealtimeGap[] = [];
      await streams[1].subscribe("ticks", (m) => void ticks.push(m.payload as number));
      await pubsubs[1].subscribe(channel, (m) => void prices.push(m.payload as number), {
        onGap: (g) => void gaps.push(g),
      });
      for (let i = 0; i < 5; i++) {
        await streams[0].publish("ticks", i);
        await pubsubs[0].publish(channel, i);
      }
      await until(() => ticks.length === 5 && prices.length === 5, "the first messages");
      // Replication is asynchronous: wait until the replica has the five entries.
      const master = (await cluster.topology()).find((n) => n.port === streamMaster)!;
      const replica = (await cluster.topology()).find((n) => n.master === master.id)!;
      for (let len = 0; len < 5; await new Promise((r) => setTimeout(r, 20))) {
        const out = await new Deno.Command("redis-cli", {
          args: ["-p", String(replica.port)],
          stdin: "piped",
          stdout: "piped",
        }).spawn();
        const writer = out.stdin.getWriter();
        await writer.write(new TextEncoder().encode(`READONLY\nXLEN ${prefix}ticks\n`));
        await writer.close();
        len = Number(
          new TextDecoder().decode((await out.output()).stdout).trim().split("\n").pop(),
        );
      }

      await cluster.kill(streamMaster);
      await cluster.waitFailover(streamMaster);
      for (let i = 5; i < 10; i++) await streams[0].publish("ticks", i);
      await until(() => ticks.length >= 10, "the ticks published after the failover", 30_000);
      await new Promise((r) => setTimeout(r, 100));
      assert.deepEqual(ticks, [...Array(10).keys()], "every tick once, in order");

      // Live only: published after the subscriber moved to the new master, it arrives.
      await until(() => gaps.length > 0, "kvPubSub to report the disconnection", 30_000);
      assert.equal(gaps[0].reason, "disconnected");
      let n = 100;
      await until(
        () => {
          void pubsubs[0].publish(channel, n++).catch(() => {});
          return prices.some((p) => p >= 100);
        },
        "a price published after the failover",
        30_000,
      );
    } finally {
      for (const b of [...streams, ...pubsubs]) await b.close().catch(() => {});
      await cluster.destroy();
    }
  },
});
