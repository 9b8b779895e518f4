/**
 * A publishing or consuming process for `delayed_restart_test.ts`:
 * `deno run -A delayed_process.ts <kind> <namespace> <role> [count] [lead ms]`, where kind is
 * `redis`, `sql`, `nats` or `denokv` (namespace: key prefix, schema, stream, or database path).
 *
 * - `consume`: handles topic `delayed.job` in group `workers`; prints `{"event":"ready"}` once
 *   subscribed and `{"event":"handled","n":..,"at":..}` for each message (`at`: its `Date.now()`).
 * - `publish`: once its transport is up, publishes `count` messages due `lead` ms later (one due
 *   time for all), prints `{"event":"published","due":..}` and waits to be killed.
 *
 * @module
 */

import { EventBus, handler, Int, topic, type Transport } from "@fw/events";
import { kvStreamTransport } from "@fw/events/kvstore";
import { sqlTransport } from "@fw/events/sql";
import { cloudPubSubTransport } from "@fw/events/cloud";
import { natsJetStreamClient } from "@fw/events/cloud-nats";
import { denoKvTransport } from "@fw/events/denokv";
import { getPublisher } from "@fw/events";
import { createLogger } from "@fw/runtime";

const [kind, ns, role, count = "0", lead = "0"] = Deno.args;
const Job = topic("delayed.job", { n: Int });
const out = (line: unknown) =>
  Deno.stdout.writeSync(new TextEncoder().encode(JSON.stringify(line) + "\n"));

function transport(): Transport {
  switch (kind) {
    case "redis":
      return kvStreamTransport({ url: "redis://127.0.0.1:6379", keyPrefix: ns });
    case "sql":
      return sqlTransport({
        url: Deno.env.get("FW_TEST_POSTGRES_URL") ?? "postgres://root@127.0.0.1:5432/test",
        schema: ns,
      });
    case "nats":
      return cloudPubSubTransport({
        client: natsJetStreamClient({
          servers: "127.0.0.1:4222",
          stream: ns,
          subjectPrefix: ns.toLowerCase(),
        }),
      });
    case "denokv":
      return denoKvTransport({ path: ns });
  }
  throw new Error(`unknown kind "${kind}"`);
}

const bus = new EventBus({
  transports: { main: transport() },
  logger: createLogger({ level: "error" }),
});
if (role === "consume") {
  await bus.add(
    handler(Job).options({ group: "workers" }).handle((m) =>
      out({ event: "handled", n: m.payload.n, at: Date.now() })
    ),
  );
  await bus.start();
  out({ event: "ready" });
} else {
  await bus.start();
  const publish = getPublisher(Job, { bus });
  await publish({ n: -1 }, { delay: Number(lead) }); // opens the connections
  const due = Date.now() + Number(lead);
  for (let n = 0; n < Number(count); n++) await publish({ n }, { deliverAt: due });
  out({ event: "published", due });
}
await new Promise(() => {}); // until killed
