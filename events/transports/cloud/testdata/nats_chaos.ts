/**
 * The NATS chaos run: a `nats-server -js` of its own (file storage in a temporary directory, a
 * free port) is killed and started again once while `messages` messages flow from a publisher
 * to a competing handler group through `cloudPubSubTransport`; it reports which were never
 * handled. Used by `nats_chaos_test.ts` and `deno task chaos:nats`.
 *
 * @module
 */

import { createLogger, Int } from "@fw/runtime";
import { EventBus } from "../../../event_bus.ts";
import { handler } from "../../../handler.ts";
import { getPublisher } from "../../../publisher.ts";
import { topic } from "../../../topic.ts";
import { CloudPubSubTransport } from "../cloud_pubsub.ts";
import { NatsJetStreamClient } from "../nats_jetstream.ts";
import { PrivateNatsServer } from "./nats_server.ts";

/** What a chaos run saw. */
export interface ChaosResult {
  /** Messages published (each acknowledged by the server). */
  published: number;
  /** Distinct messages handled. */
  handled: number;
  /** Handler invocations (redeliveries after the restart count again). */
  invocations: number;
  /** Numbers never handled. */
  missing: number[];
  /** Wall time in ms. */
  elapsedMs: number;
}

const Tick = topic("chaos.tick", { n: Int });

/**
 * Runs the chaos scenario.
 *
 * @param messages How many messages to publish.
 * @param log Progress lines.
 */
export async function runNatsChaos(
  messages: number,
  log: (line: string) => void = () => {},
): Promise<ChaosResult> {
  const started = Date.now();
  const server = new PrivateNatsServer();
  await server.start();
  const stream = `CHAOS_${crypto.randomUUID().slice(0, 8)}`;
  const options = {
    servers: server.address,
    stream,
    subjectPrefix: stream.toLowerCase(),
    ackWaitMs: 2000,
    publishTimeoutMs: 60_000,
  };
  const logger = createLogger({ level: "error", sink: { write: () => {} } });
  const consumer = new EventBus({
    transports: { nats: new CloudPubSubTransport({ client: new NatsJetStreamClient(options) }) },
    logger,
  });
  const producer = new EventBus({
    transports: { nats: new CloudPubSubTransport({ client: new NatsJetStreamClient(options) }) },
    logger,
  });
  const seen = new Uint8Array(messages);
  let handled = 0, invocations = 0, published = 0;
  try {
    await consumer.add(
      handler(Tick).options({ group: "chaos", concurrency: 100, maxBackoff: 200 }).handle((m) => {
        invocations++;
        if (seen[m.payload.n] === 0) {
          seen[m.payload.n] = 1;
          handled++;
        }
      }),
    );
    await consumer.start();
    await producer.start();
    const publish = getPublisher(Tick, { bus: producer });
    const restartAt = Math.floor(messages / 3);
    let restart: Promise<void> | undefined;
    const window = new Set<Promise<unknown>>();
    for (let n = 0; n < messages; n++) {
      const p = publish({ n }).then(() => {
        published++;
        window.delete(p);
      });
      window.add(p);
      if (window.size >= 200) await Promise.race(window);
      if (n === restartAt) {
        restart = (async () => {
          log(`restarting nats-server at message ${n} (${handled} handled)`);
          await server.kill();
          await new Promise((r) => setTimeout(r, 300));
          await server.start();
          log("nats-server is back");
        })();
      }
    }
    await Promise.all(window);
    await restart;
    log(`published ${published}; waiting for the handler`);
    const end = Date.now() + 60_000;
    while (handled < messages && Date.now() < end) await new Promise((r) => setTimeout(r, 50));
    const missing: number[] = [];
    for (let n = 0; n < messages; n++) if (seen[n] === 0) missing.push(n);
    return { published, handled, invocations, missing, elapsedMs: Date.now() - started };
  } finally {
    await consumer.stop();
    await producer.stop();
    await server.close();
  }
}
