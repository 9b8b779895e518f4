/**
 * A consumer process for `sql_chaos_test.ts`:
 * `deno run -A sql_consumer.ts <url> <schema> <application name> [handler ms, default 10]`.
 * It handles topic `chaos.job` in group `workers` (concurrency 20) and prints
 * one JSON line per event: `ready` once subscribed, `started` and `handled` with the message's `n`
 * around each handler run. Short visibility and poll timings make a dead peer's claims move on quickly.
 *
 * @module
 */

import { createLogger } from "@fw/runtime";
import { EventBus, handler, Int, topic } from "@fw/events";
import { sqlTransport } from "@fw/events/sql";

const [url, schema, applicationName, delay = "10"] = Deno.args;
const delayMs = Number(delay);
const Job = topic("chaos.job", { n: Int });
const encoder = new TextEncoder();
// Written at once (not buffered): a line must be in the pipe before the handler returns and the
// message is acknowledged, or a SIGKILL right after the ack would hide that it was handled.
const say = (line: Record<string, unknown>) =>
  void Deno.stdout.writeSync(encoder.encode(JSON.stringify({ pid: Deno.pid, ...line }) + "\n"));

const transport = sqlTransport({
  url,
  schema,
  applicationName,
  poolSize: 4,
  visibilityTimeoutMs: 1500,
  instanceTtlMs: 1500,
  pollIntervalMs: 300,
  logger: createLogger({ level: "warn" }), // on stderr: the test shows it when it fails
});
const bus = new EventBus({ transports: { pg: transport } });
await bus.add(
  handler(Job).options({ group: "workers", concurrency: 20, timeout: 10_000, maxBackoff: 200 })
    .handle(async (m) => {
      say({ event: "started", n: m.payload.n, attempt: m.attempt });
      await new Promise((r) => setTimeout(r, delayMs));
      say({ event: "handled", n: m.payload.n, attempt: m.attempt });
    }),
);
await bus.start();
say({ event: "ready" });
