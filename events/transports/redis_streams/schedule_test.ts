import { openRedis } from "../../_redis.ts";
import { runScheduleStoreConformance } from "../../schedule/store_conformance.ts";
import { threeInstancesOneKilled } from "../../schedule/testdata/multi_process.ts";
import { KvStreamTransport } from "./redis_streams.ts";

const URL = "redis://127.0.0.1:6379";
const run = crypto.randomUUID().slice(0, 8);
const prefixOf = (ns: string) => `fwtest:${run}:${ns}:`;
const opened = new Map<string, KvStreamTransport[]>();

async function dropKeys(prefix: string): Promise<void> {
  const redis = await openRedis("test", { url: URL });
  try {
    const found = await redis.main.sendCommand(["KEYS", `${prefix}*`]) as string[];
    if (found.length) await redis.main.sendCommand(["DEL", ...found]);
  } finally {
    await redis.close();
  }
}

runScheduleStoreConformance("RedisScheduleStore", {
  create(ns) {
    const t = new KvStreamTransport({ url: URL, keyPrefix: prefixOf(ns) });
    opened.set(ns, [...opened.get(ns) ?? [], t]);
    return t.scheduleStore();
  },
  async cleanup(ns) {
    for (const t of opened.get(ns) ?? []) await t.close();
    await dropKeys(prefixOf(ns));
  },
});

Deno.test("schedules on Redis: three processes, one SIGKILLed, run each tick once", async () => {
  const prefix = prefixOf("multi");
  try {
    await threeInstancesOneKilled("redis", prefix);
  } finally {
    await dropKeys(prefix);
  }
});
