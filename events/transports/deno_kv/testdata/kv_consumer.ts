/**
 * A consumer process for `deno_kv_kill_test.ts`: `deno run -A kv_consumer.ts <db path> <mode>`.
 * It handles topic `kill.job` in group `workers` on the Deno KV database at the path and prints
 * one JSON line per event: `ready` once subscribed, `started` when a delivery begins, `handled`
 * when it ends. In mode `hang` the handler never returns (the test kills the process).
 *
 * @module
 */

import { EventBus, handler, Int, topic } from "@fw/events";
import { denoKvTransport } from "@fw/events/denokv";

const [path, mode] = Deno.args;
const Job = topic("kill.job", { n: Int });
const say = (event: string, fields: Record<string, unknown> = {}) =>
  console.log(JSON.stringify({ event, pid: Deno.pid, ...fields }));

const bus = new EventBus({ transports: { kv: denoKvTransport({ path, pollIntervalMs: 100 }) } });
await bus.add(
  handler(Job).options({ group: "workers", timeout: 120_000 }).handle(async (m) => {
    say("started", { n: m.payload.n, id: m.id, attempt: m.attempt });
    if (mode === "hang") await new Promise(() => {});
    say("handled", { n: m.payload.n, id: m.id, attempt: m.attempt });
  }),
);
await bus.start();
say("ready");
