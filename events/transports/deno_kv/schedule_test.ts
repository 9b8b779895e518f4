import { runScheduleStoreConformance } from "../../schedule/store_conformance.ts";
import { threeInstancesOneKilled } from "../../schedule/testdata/multi_process.ts";
import { DenoKvTransport } from "./deno_kv.ts";

const dir = await Deno.makeTempDir({ prefix: "fw-kv-schedules-" });

runScheduleStoreConformance("DenoKvScheduleStore", {
  open(ns) {
    // Two handles on one database file, as two processes would have.
    const t = new DenoKvTransport({ path: `${dir}/${ns}.sqlite` });
    return { store: t.scheduleStore(), close: () => t.close() };
  },
});

Deno.test("schedules on Deno KV: three processes, one SIGKILLed, run each tick once", async () => {
  try {
    await threeInstancesOneKilled("denokv", `${dir}/multi.sqlite`);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});
