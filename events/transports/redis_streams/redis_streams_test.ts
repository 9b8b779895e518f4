import assert from "node:assert/strict";
import { KvStreamTransport } from "./redis_streams.ts";
import { runTransportConformance } from "../conformance.ts";
import { openRedis } from "../../_redis.ts";

const URL = "redis://127.0.0.1:6379";
const run = crypto.randomUUID().slice(0, 8);
const prefixOf = (ns: string) => `fwtest:${run}:${ns}:`;

/** Deletes every key under a prefix. */
async function dropKeys(prefix: string): Promise<void> {
  const redis = await openRedis("test", { url: URL });
  try {
    let cursor = "0";
    do {
      const [next, found] = await redis.main.sendCommand([
        "SCAN", cursor, "MATCH", `${prefix}*`, "COUNT", "1000",
      ]) as [string, string[]]; // deno-fmt-ignore
      cursor = next;
      if (found.length) await redis.main.sendCommand(["DEL", ...found]);
    } while (cursor !== "0");
  } finally {
    await redis.close();
  }
}

runTransportConformance("KvStreamTransport", {
  create: (ns) => new KvStreamTransport({ url: URL, keyPrefix: prefixOf(ns) }),
  cleanup: async (namespaces) => {
    for (const ns of namespaces) await dropKeys(prefixOf(ns));
  },
  timeoutMs: 10_000,
});
