/**
 * Test support for the Redis realtime brokers: key clean-up, killing connections by name, waiting.
 *
 * @module
 */

import { openRedis } from "../../_redis.ts";

const URL = "redis://127.0.0.1:6379";

/** Deletes every key under the given prefixes (SCAN, never KEYS). */
export async function dropKeys(prefixes: readonly string[]): Promise<void> {
  const redis = await openRedis("test clean-up", { url: URL });
  try {
    for (const prefix of prefixes) {
      let cursor = "0";
      do {
        const [next, keys] = await redis.main.sendCommand([
          "SCAN",
          cursor,
          "MATCH",
          `${prefix.replace(/[*?[\]\\]/g, "\\$&")}*`,
          "COUNT",
          "500",
        ]) as [string, string[]];
        if (keys.length) await redis.main.sendCommand(["DEL", ...keys]);
        cursor = next;
      } while (cursor !== "0");
    }
  } finally {
    await redis.close();
  }
}

/** Kills the connections named `name` (`CLIENT SETNAME`); returns how many. */
export async function killClients(name: string): Promise<number> {
  const redis = await openRedis("test kill", { url: URL });
  try {
    const list = String(await redis.main.sendCommand(["CLIENT", "LIST"]));
    const ids = list.split("\n").filter((line) => line.includes(` name=${name} `))
      .map((line) => /(?:^|\s)id=(\d+)/.exec(line)![1]);
    for (const id of ids) await redis.main.sendCommand(["CLIENT", "KILL", "ID", id]);
    return ids.length;
  } finally {
    await redis.close();
  }
}

/** Waits (polling every 5 ms, up to 5 s) until `check()` holds. */
export async function until(check: () => boolean, what: string, ms = 5_000): Promise<void> {
  const end = Date.now() + ms;
  while (!check()) {
    if (Date.now() > end) throw new Error(`Timed out after ${ms} ms waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 5));
  }
}
