/**
 * Kills a consumer process mid-delivery (SIGKILL) on NATS JetStream and shows that the message is
 * delivered to the next instance of its group once `ackWaitMs` has passed (spec 6.2.3,
 * at-least-once), with the next attempt number.
 *
 * @module
 */

import assert from "node:assert/strict";
import { createLogger, Int, MemorySink } from "@fw/runtime";
import { EventBus } from "../../event_bus.ts";
import { handler } from "../../handler.ts";
import { getPublisher } from "../../publisher.ts";
import { topic } from "../../topic.ts";
import { CloudPubSubTransport } from "./cloud_pubsub.ts";
import { NatsJetStreamClient } from "./nats_jetstream.ts";
import { NATS_ADDRESS, natsReachable } from "./testdata/nats_server.ts";

const reachable = await natsReachable();
if (!reachable) {
  const reason = `no NATS server answers on ${NATS_ADDRESS}`;
  if (Deno.env.get("CI")) throw new Error(`The NATS kill test cannot run: ${reason}`);
  console.log(`skipping the NATS kill test: ${reason}`);
}

const Job = topic("kill.job", { n: Int });
const fixture = new URL("./testdata/nats_consumer.ts", import.meta.url).pathname;
const config = new URL("../../../deno.json", import.meta.url).pathname;

async function until(check: () => boolean, ms: number, what: string): Promise<void> {
  const end = Date.now() + ms;
  while (!check()) {
    if (Date.now() > end) throw new Error(`Timed out after ${ms} ms waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 10));
  }
}

Deno.test({
  name: "CloudPubSubTransport on NATS redelivers a killed consumer's message to the next one",
  ignore: !reachable,
  fn: async () => {
    const stream = `FWT_KILL_${crypto.randomUUID().slice(0, 8)}`;
    const client = () =>
      new NatsJetStreamClient({
        servers: NATS_ADDRESS,
        stream,
        subjectPrefix: stream.toLowerCase(),
        ackWaitMs: 1000,
      });
    const child = new Deno.Command(Deno.execPath(), {
      args: ["run", "-A", "--config", config, fixture, NATS_ADDRESS, stream],
      stdin: "null",
      stdout: "piped",
      stderr: "null",
    }).spawn();
    const lines: { event: string; attempt?: number }[] = [];
    const reading = (async () => {
      let buf = "";
      for await (const chunk of child.stdout.pipeThrough(new TextDecoderStream())) {
        buf += chunk;
        for (let nl; (nl = buf.indexOf("\n")) >= 0; buf = buf.slice(nl + 1)) {
          const line = buf.slice(0, nl).trim();
          if (line.startsWith("{")) lines.push(JSON.parse(line));
        }
      }
    })();
    const publisher = new EventBus({
      transports: { nats: new CloudPubSubTransport({ client: client() }) },
    });
    const next = new EventBus({
      transports: { nats: new CloudPubSubTransport({ client: client() }) },
      logger: createLogger({ sink: new MemorySink() }),
    });
    const handled: number[] = [];
    try {
      await until(() => lines.some((l) => l.event === "ready"), 30_000, "the child to subscribe");
      await publisher.start();
      await getPublisher(Job, { bus: publisher })({ n: 7 });
      await until(() => lines.some((l) => l.event === "started"), 10_000, "the child's delivery");
      child.kill("SIGKILL");
      await child.status;
      await next.add(
        handler(Job).options({ group: "workers" }).handle((m) => void handled.push(m.attempt)),
      );
      await next.start();
      await until(() => handled.length === 1, 10_000, "the redelivery");
      assert.deepEqual(handled, [2], "delivered again, as attempt 2");
    } finally {
      try {
        child.kill("SIGKILL");
      } catch { /* already gone */ }
      await child.status;
      await reading;
      await next.stop();
      await publisher.stop();
      const c = client();
      await c.deleteStream();
      await c.close();
    }
  },
});
