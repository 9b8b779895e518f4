/**
 * A consumer process for `nats_kill_test.ts`: `deno run -A nats_consumer.ts <address> <stream>`.
 * It handles topic `kill.job` in group `workers` and prints one JSON line per event: `ready` once
 * subscribed, `started` when a delivery begins. Its handler never returns (the test kills it).
 *
 * @module
 */

import { EventBus, handler, Int, topic } from "@fw/events";
import { cloudPubSubTransport } from "@fw/events/cloud";
import { natsJetStreamClient } from "@fw/events/cloud-nats";

const [servers, stream] = Deno.args;
const Job = topic("kill.job", { n: Int });
const say = (event: string, fields: Record<string, unknown> = {}) =>
  console.log(JSON.stringify({ event, pid: Deno.pid, ...fields }));

const client = natsJetStreamClient({
  servers,
  stream,
  subjectPrefix: stream.toLowerCase(),
  ackWaitMs: 1000,
});
const bus = new EventBus({ transports: { nats: cloudPubSubTransport({ client }) } });
await bus.add(
  handler(Job).options({ group: "workers", timeout: 120_000 }).handle(async (m) => {
    say("started", { n: m.payload.n, attempt: m.attempt });
    await new Promise(() => {});
  }),
);
await bus.start();
say("ready");
