/**
 * A consumer process for `sql_chaos_test.ts`:
 * `deno run -A sql_consumer.ts <url> <schema> <application name>`.
 * It handles topic `chaos.job` in group `workers` (concurrency 20, a few ms per message) and prints
 * one JSON line per event: `ready` once subscribed, `started` and `handled` with the message's `n`
 * around each handler run. Short visibility and poll timings make a dead peer's claims move on quickly.
 *
 * @module
 */

import { EventBus, handler, Int, topic } from "@fw/events";
import { sqlTransport } from "@fw/events/sql";

const [url, schema, applicationName] = Deno.args;
const Job = topic("chaos.job", { n: Int });
const out: string[] = [];
let flushing = false;
const say = (line: Record<string, unknown>) => {
  out.push(JSON.stringify({ pid: Deno.pid, ...line }));
  if (!flushing) {
    flushing = true;
    setTimeout(() => {
      flushing = false;
      const text = out.join("\n") + "\n";
      out.length = 0;
      Deno.stdout.writeSync(new TextEncoder().encode(text));
    }, 5);
  }
};

const transport = sqlTransport({
  url,
  schema,
  applicationName,
  poolSize: 4,
  visibilityTimeoutMs: 1500,
  instanceTtlMs: 1500,
  pollIntervalMs: 300,
});
const bus = new EventBus({ transports: { pg: transport } });
await bus.add(
  handler(Job).options({ group: "workers", concurrency: 20, timeout: 10_000, maxBackoff: 200 })
    .handle(async (m) => {
      say({ event: "started", n: m.payload.n, attempt: m.attempt });
      await new Promise((r) => setTimeout(r, 10));
      say({ event: "handled", n: m.payload.n, attempt: m.attempt });
    }),
);
await bus.start();
say({ event: "ready" });
