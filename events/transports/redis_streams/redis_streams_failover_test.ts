/**
 * Failover on a Redis Cluster (issue 31): three masters with a replica each (started by
 * `testdata/redis_cluster.ts` on free ports), 100 concurrent publishers, two consumers of one
 * competing group, the topic spread over three partitions (`partitions: 3`, so over the shards);
 * the master that serves the topic's first partition is killed with SIGKILL mid-run and its
 * replica takes over. Every message must be handled at least once; the test prints the duplicates.
 *
 * Publishes use `waitForReplicas: 1`: Redis replicates asynchronously, so a publish the master
 * acknowledged but had not yet sent to its replica would be lost with the master; with the option
 * such a publish rejects and the publisher sends it again. The promoted replica has no replica of
 * its own until the killed node is started again (it rejoins as the new master's replica), so
 * publishes reject meanwhile and are retried: the test restarts it once the failover is done.
 *
 * The gate runs 1,000 messages; `FW_CHAOS_MESSAGES` sets another count and `deno task
 * chaos:redis-cluster` runs the full 10,000.
 *
 * @module
 */

import assert from "node:assert/strict";
import { createLogger, Int, MemorySink } from "@fw/runtime";
import { EventBus } from "../../event_bus.ts";
import { handler } from "../../handler.ts";
import { getPublisher } from "../../publisher.ts";
import { topic } from "../../topic.ts";
import { KvStreamTransport } from "./redis_streams.ts";
import { RedisCluster } from "./testdata/redis_cluster.ts";

const MESSAGES = Number(Deno.env.get("FW_CHAOS_MESSAGES") ?? 1_000);
const PUBLISHERS = 100;
const Job = topic("failover.job", { n: Int });

async function until(check: () => boolean, ms: number, what: () => string): Promise<void> {
  const end = Date.now() + ms;
  while (!check()) {
    if (Date.now() > end) throw new Error(`Timed out after ${ms} ms waiting for ${what()}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

async function slotOf(port: number, key: string): Promise<number> {
  const out = await new Deno.Command("redis-cli", {
    args: ["-p", String(port), "cluster", "keyslot", key],
    stdout: "piped",
  }).output();
  return Number(new TextDecoder().decode(out.stdout).trim());
}

Deno.test({
  name:
    `kvStreamTransport failover: ${MESSAGES} messages from ${PUBLISHERS} publishers on a Redis Cluster while a master is SIGKILLed and its replica promoted: none lost`,
  sanitizeOps: false,
  sanitizeResources: false,
  fn: async () => {
    const cluster = await RedisCluster.start({ masters: 3, replicas: 1 });
    const prefix = "failover:";
    const sink = new MemorySink();
    const logger = createLogger({ sink, level: "warn" });
    const transports: KvStreamTransport[] = [];
    const buses: EventBus[] = [];
    const make = (extra: Partial<ConstructorParameters<typeof KvStreamTransport>[0]> = {}) => {
      const transport = new KvStreamTransport({
        url: cluster.urls,
        keyPrefix: prefix,
        partitions: 3,
        publishTimeoutMs: 20_000,
        ...extra,
      });
      const bus = new EventBus({ transports: { redis: transport }, logger });
      transports.push(transport);
      buses.push(bus);
      return bus;
    };
    const seen = new Set<number>();
    let handled = 0;
    let publishErrors = 0;
    let published = 0;
    try {
      for (let i = 0; i < 2; i++) {
        const bus = make();
        await bus.add(
          handler(Job).options({ group: "g", maxBackoff: 50, jitter: 0, timeout: 5_000 }).handle(
            (m) => {
              handled++;
              seen.add(m.payload.n);
            },
          ),
        );
        await bus.start();
      }
      const publisherBus = make({ waitForReplicas: 1, waitForReplicasMs: 2_000 });
      const publish = getPublisher(Job, { bus: publisherBus });
      const victim = await cluster.masterOf(
        await slotOf(cluster.nodes[0].port, `${prefix}{${Job.name}}`),
      );
      let next = 0;
      const publisher = async () => {
        while (next < MESSAGES) {
          const n = next++;
          for (;;) {
            try {
              await publish({ n }, { messageId: `failover-${n}`, key: `k${n % 50}` });
              published++;
              break;
            } catch {
              publishErrors++; // no master for the slot yet: publish again
              await new Promise((r) => setTimeout(r, 100));
            }
          }
        }
      };
      let killedAt = -1;
      let failoverMs = 0;
      const chaos = async () => {
        await until(() => published >= MESSAGES * 0.3, 120_000, () => "30% published");
        killedAt = published;
        const started = Date.now();
        await cluster.kill(victim);
        await cluster.waitFailover(victim);
        failoverMs = Date.now() - started;
        // The new master has no replica until the old one is back (as its replica): until then
        // publishes with waitForReplicas: 1 reject and are sent again.
        await cluster.restart(victim);
      };
      await Promise.all([chaos(), ...Array.from({ length: PUBLISHERS }, publisher)]);
      await until(
        () => seen.size === MESSAGES,
        120_000,
        () => `every message (${seen.size} of ${MESSAGES} handled)`,
      );
      console.log(
        `failover: ${MESSAGES} messages, ${seen.size} handled, ${
          handled - seen.size
        } duplicates, ${publishErrors} publish errors retried; master ${victim} SIGKILLed after ${killedAt} publishes, replica promoted in ${failoverMs} ms, old master back as its replica`,
      );
      assert.equal(seen.size, MESSAGES);
      assert.ok(killedAt >= 0);
    } finally {
      for (const bus of buses) await bus.stop().catch(() => {});
      for (const t of transports) await t.close().catch(() => {});
      await cluster.destroy();
    }
  },
});
