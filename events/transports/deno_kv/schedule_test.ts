import { runScheduleStoreConformance } from "../../schedule/store_conformance.ts";
import { threeInstancesOneKilled } from "../../schedule/testdata/multi_process.ts";
import { DenoKvTransport } from "./deno_kv.ts";

const dir = await Deno.makeTempDir({ prefix: "fw-kv-schedules-" });
const opened = new Map<string, DenoKvTransport[]>();

runScheduleStoreConformance("DenoKvScheduleStore", {
  create(ns) {
    // Two handles on one database file, as two processes would have.
    const t = new DenoKvTransport({ path: `${dir}/${ns}.sqlite` });
    opened.set(ns, [...opened.get(ns) ?? [], t]);
    return t.scheduleStore();
  },
  async cleanup(ns) {
    for (const t of opened.get(ns) ?? []) await t.close();
  },
});

Deno.test("schedules on Deno KV: three processes, one SIGKILLed, run each tick once", async () => {
  try {
    await threeInstancesOneKilled("denokv", `${dir}/multi.sqlite`);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});
