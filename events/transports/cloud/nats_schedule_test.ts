import { runScheduleStoreConformance } from "../../schedule/store_conformance.ts";
import { threeInstancesOneKilled } from "../../schedule/testdata/multi_process.ts";
import type { NatsScheduleStore } from "./_schedule_nats.ts";
import { NatsJetStreamClient } from "./nats_jetstream.ts";
import { NATS_ADDRESS, natsReachable } from "./testdata/nats_server.ts";

const reachable = await natsReachable();
if (!reachable) {
  const reason = `no NATS server answers on ${NATS_ADDRESS} (start nats-server -js)`;
  if (Deno.env.get("CI")) throw new Error(`NATS schedule tests cannot run: ${reason}`);
  console.log(`skipping the NATS schedule tests: ${reason}`);
}

const streamOf = (ns: string) => `FWT_${ns}`;

/** Deletes the schedules bucket and the stream of a namespace. */
async function drop(stream: string): Promise<void> {
  const c = new NatsJetStreamClient({ servers: NATS_ADDRESS, stream });
  try {
    await (c.scheduleStore() as NatsScheduleStore).drop();
    await c.deleteStream();
  } finally {
    await c.close();
  }
}

if (reachable) {
  runScheduleStoreConformance("NatsScheduleStore", {
    open(ns) {
      const c = new NatsJetStreamClient({ servers: NATS_ADDRESS, stream: streamOf(ns) });
      return { store: c.scheduleStore(), close: () => c.close() };
    },
    cleanup: (ns) => drop(streamOf(ns)),
  });

  Deno.test("schedules on NATS: three processes, one SIGKILLed, run each tick once", async () => {
    const stream = streamOf(crypto.randomUUID().slice(0, 8));
    try {
      await threeInstancesOneKilled("nats", stream);
    } finally {
      await drop(stream);
    }
  });
}
