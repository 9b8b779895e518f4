import { openRedis } from "../../_redis.ts";
import { runScheduleStoreConformance } from "../../schedule/store_conformance.ts";
import { threeInstancesOneKilled } from "../../schedule/testdata/multi_process.ts";
import { KvStreamTransport } from "./redis_streams.ts";

const prefixOf = (ns: string) => `fwtest:sched:${ns}:`;
const DROP = "for _, k in ipairs(redis.call('KEYS', ARGV[1])) do redis.call('DEL', k) end";

/** Deletes every key of a test's prefix. */
async function dropKeys(prefix: string): Promise<void> {
  const redis = await openRedis("test", { url: "redis://127.0.0.1:6379" });
  await redis.main.sendCommand(["EVAL", DROP, "0", `${prefix}*`]).finally(() => redis.close());
}

runScheduleStoreConformance("RedisScheduleStore", {
  open(ns) {
    const t = new KvStreamTransport({ url: "redis://127.0.0.1:6379", keyPrefix: prefixOf(ns) });
    return { store: t.scheduleStore(), close: () => t.close() };
  },
  cleanup: (ns) => dropKeys(prefixOf(ns)),
});

Deno.test("schedules on Redis: three processes, one SIGKILLed, run each tick once", async () => {
  const prefix = prefixOf("multi");
  try {
    await threeInstancesOneKilled("redis", prefix);
  } finally {
    await dropKeys(prefix);
  }
});
