/**
 * A consumer process for `redis_streams_chaos_test.ts`:
 * `deno run -A redis_consumer.ts <redis url> <key prefix> [partitions]`. It handles topic `chaos.job` in group
 * `workers` and prints `ready` once subscribed, then `s <n>` when a delivery starts and
 * `h <n> <attempt>` when it ends (each handler holds its message for a few ms, so a kill lands
 * mid-delivery).
 *
 * @module
 */

import { EventBus, handler, Int, topic } from "@fw/events";
import { kvStreamTransport } from "@fw/events/kvstore";
import { createLogger } from "@fw/runtime";

const [url, keyPrefix, partitions = "1"] = Deno.args;
const Job = topic("chaos.job", { n: Int });
const out = (line: string) => Deno.stdout.writeSync(new TextEncoder().encode(line + "\n"));

const bus = new EventBus({
  transports: {
    redis: kvStreamTransport({
      url,
      keyPrefix,
      claimGraceMs: 500,
      instanceTtlMs: 3000,
      prefetch: 64,
      partitions: Number(partitions),
    }),
  },
  logger: createLogger({ level: "error" }),
});
await bus.add(
  handler(Job).options({ group: "workers", timeout: 1000, maxBackoff: 200 }).handle(async (m) => {
    out(`s ${m.payload.n}`);
    await new Promise((r) => setTimeout(r, 1 + Math.random() * 4));
    out(`h ${m.payload.n} ${m.attempt}`);
  }),
);
await bus.start();
out("ready");
