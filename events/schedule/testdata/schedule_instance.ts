/**
 * One instance of an application running an every-second schedule, for the multi-process
 * schedule tests. Usage: `deno run -A schedule_instance.ts <engine> <namespace> <runs file>`,
 * engine `redis`, `sql`, `denokv` or `nats`. Each run appends
 * `<tick ms> <pid> <attempt>` to the runs file; the process prints `ready` once started and stops
 * cleanly on SIGTERM.
 *
 * @module
 */

import { createLogger } from "@fw/runtime";
import { schedule } from "../schedule.ts";
import { Scheduler } from "../scheduler.ts";
import type { Transport } from "../../transport.ts";

const [engine, ns, file] = Deno.args;

async function transportOf(): Promise<Transport> {
  switch (engine) {
    case "redis": {
      const { KvStreamTransport } = await import("../../transports/redis_streams/redis_streams.ts");
      return new KvStreamTransport({ url: "redis://127.0.0.1:6379", keyPrefix: ns });
    }
    case "sql": {
      const { SqlTransport } = await import("../../transports/sql/sql_transport.ts");
      const url = Deno.env.get("FW_TEST_POSTGRES_URL") ?? "postgres://root@127.0.0.1:5432/test";
      return new SqlTransport({ url, schema: ns });
    }
    case "denokv": {
      const { DenoKvTransport } = await import("../../transports/deno_kv/deno_kv.ts");
      return new DenoKvTransport({ path: ns });
    }
    case "nats": {
      const { CloudPubSubTransport } = await import("../../transports/cloud/cloud_pubsub.ts");
      const { NatsJetStreamClient } = await import("../../transports/cloud/nats_jetstream.ts");
      return new CloudPubSubTransport({
        client: new NatsJetStreamClient({ servers: "127.0.0.1:4222", stream: ns }),
      });
    }
  }
  throw new Error(`unknown engine "${engine}"`);
}

const transport = await transportOf();
const out = await Deno.open(file, { append: true, create: true });
const encoder = new TextEncoder();
const everySecond = schedule("every.second")
  // overlap "allow": ticks that a loaded machine delays past the next one still all run.
  .options({ cron: "* * * * * *", lease: 2000, maxRetries: 5, overlap: "allow" })
  .handle(async (run) => {
    // One write of a short line with O_APPEND: lines of concurrent processes never interleave.
    await out.write(encoder.encode(`${run.scheduledAt.getTime()} ${Deno.pid} ${run.attempt}\n`));
  });
const scheduler = new Scheduler({
  transports: { main: transport },
  logger: createLogger({ level: "warn" }),
});
scheduler.add(everySecond);
await scheduler.start();
console.log("ready");

Deno.addSignalListener("SIGTERM", async () => {
  await scheduler.stop();
  await transport.close();
  out.close();
  Deno.exit(0);
});
