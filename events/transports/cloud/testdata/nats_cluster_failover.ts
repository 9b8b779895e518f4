/**
 * The NATS cluster failover run: a three-node JetStream cluster of its own
 * ({@linkcode NatsCluster}), one stream with three replicas, `publishers` concurrent publishers
 * (spread over four client connections) sending `messages` messages to a group of two competing
 * consumer instances through `cloudPubSubTransport`. The group's consumer is made to be led by the
 * node that leads the stream; once a third of the messages are stored, that node is killed
 * (SIGKILL), so both the stream and the consumer lose their leader, and the run goes on with the
 * other two nodes, which elect new ones. After the last message is handled the killed node starts
 * again with its files and must catch up with the stream. It reports which messages were never
 * handled and how many were handled more than once. Used by `nats_cluster_failover_test.ts` and `deno task chaos:nats-cluster`.
 *
 * @module
 */

import { createLogger, Int } from "@fw/runtime";
import { EventBus } from "../../../event_bus.ts";
import { handler } from "../../../handler.ts";
import { getPublisher } from "../../../publisher.ts";
import { topic } from "../../../topic.ts";
import { CloudPubSubTransport } from "../cloud_pubsub.ts";
import {
  natsConsumerName,
  NatsJetStreamClient,
  type NatsJetStreamClientOptions,
} from "../nats_jetstream.ts";
import { NatsCluster } from "./nats_cluster.ts";

/** What a failover run saw. */
export interface FailoverResult {
  /** Messages published (each acknowledged by the cluster). */
  published: number;
  /** Distinct messages handled. */
  handled: number;
  /** Handler invocations. */
  invocations: number;
  /** Messages the stream holds at the end (more than `published` means a publish stored twice). */
  stored: number;
  /** Messages handled more than once (invocations beyond the first). */
  duplicates: number;
  /** Numbers never handled. */
  missing: number[];
  /** The node killed (it led the stream). */
  killed: string;
  /** The stream's leader after the kill. */
  newLeader: string;
  /** From the kill until the monitoring endpoints name the new stream leader, in ms. */
  electionMs: number;
  /** Wall time in ms. */
  elapsedMs: number;
}

/** Options of {@linkcode runNatsClusterFailover}. */
export interface FailoverOptions {
  /** How many messages (default 10,000). */
  messages?: number;
  /** Concurrent publishers (default 100). */
  publishers?: number;
  /** Progress lines. */
  log?: (line: string) => void;
  /** How long to wait for the handlers after the last publish, in ms (default 60,000). */
  drainTimeoutMs?: number;
}

const Tick = topic("failover.tick", { n: Int });

/**
 * Runs the failover scenario.
 *
 * @param options Sizes and a log.
 * @returns What it saw; the caller asserts.
 */
export async function runNatsClusterFailover(
  options: FailoverOptions = {},
): Promise<FailoverResult> {
  const messages = options.messages ?? 10_000;
  const publishers = options.publishers ?? 100;
  const log = options.log ?? (() => {});
  const started = Date.now();
  const cluster = new NatsCluster();
  await cluster.start();
  log(`cluster ${cluster.name} up: ${cluster.servers.join(", ")}`);
  const stream = `FAILOVER_${crypto.randomUUID().slice(0, 8)}`;
  const settings: NatsJetStreamClientOptions = {
    servers: cluster.servers,
    stream,
    subjectPrefix: stream.toLowerCase(),
    replicas: 3,
    ackWaitMs: 2000,
    publishTimeoutMs: 60_000,
  };
  const logger = createLogger({ level: "error", sink: { write: () => {} } });
  const bus = () =>
    new EventBus({
      transports: {
        nats: new CloudPubSubTransport({ client: new NatsJetStreamClient(settings) }),
      },
      logger,
    });
  const consumers = [bus(), bus()];
  const producers = [bus(), bus(), bus(), bus()];
  const counts = new Uint16Array(messages);
  let handled = 0, invocations = 0, published = 0;
  let killed = "", newLeader = "", electionMs = 0;
  let warm = false;
  try {
    for (const c of consumers) {
      await c.add(
        handler(Tick).options({ group: "failover", concurrency: 50, maxBackoff: 200 }).handle(
          (m) => {
            if (m.payload.n < 0) return void (warm = true);
            invocations++;
            if (counts[m.payload.n]++ === 0) handled++;
          },
        ),
      );
      await c.start();
    }
    for (const p of producers) await p.start();
    const leader = await cluster.colocateConsumer(
      stream,
      natsConsumerName(`${Tick.name}~failover`),
    );
    log(`stream ${stream} (3 replicas) and its consumer led by ${leader}`);
    // The step-downs may have left the consumers waiting on a pull the old leader never answers
    // (they pull again within seconds): let one message through before the clock starts.
    await getPublisher(Tick, { bus: producers[0] })({ n: -1 });
    const warmEnd = Date.now() + 30_000;
    while (!warm) {
      if (Date.now() > warmEnd) throw new Error("The consumers received nothing in 30 s");
      await new Promise((r) => setTimeout(r, 20));
    }
    const killAt = Math.floor(messages / 3);
    let kill: Promise<void> | undefined;
    let next = 0;
    const publisher = async (i: number) => {
      const publish = getPublisher(Tick, { bus: producers[i % producers.length] });
      for (let n = next++; n < messages; n = next++) {
        await publish({ n });
        published++;
        if (published === killAt) {
          kill = (async () => {
            killed = leader;
            log(
              `killing ${killed} (stream and consumer leader) after ${published} published, ${handled} handled`,
            );
            const killedAt = Date.now();
            await cluster.kill(killed);
            newLeader = await cluster.waitForStreamLeader(stream, 60_000);
            electionMs = Date.now() - killedAt;
            log(`${newLeader} leads the stream now (${published} published, ${handled} handled)`);
          })();
        }
      }
    };
    await Promise.all(Array.from({ length: publishers }, (_, i) => publisher(i)));
    await kill;
    log(`published ${published}; waiting for the handlers`);
    const end = Date.now() + (options.drainTimeoutMs ?? 60_000);
    while (handled < messages && Date.now() < end) await new Promise((r) => setTimeout(r, 50));
    const missing: number[] = [];
    for (let n = 0; n < messages; n++) if (counts[n] === 0) missing.push(n);
    const stored = ((await cluster.streamMessages(stream)) ?? 0) - 1; // less the warm-up
    // The killed node comes back with its files and catches up from the new leader.
    await cluster.restart(killed);
    await cluster.waitForCurrentReplicas(stream, 60_000);
    log(`${killed} is back and current`);
    return {
      published,
      stored,
      handled,
      invocations,
      duplicates: invocations - handled,
      missing,
      killed,
      newLeader,
      electionMs,
      elapsedMs: Date.now() - started,
    };
  } finally {
    for (const b of [...consumers, ...producers]) await b.stop().catch(() => {});
    await cluster.close();
  }
}
