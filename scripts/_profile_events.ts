/**
 * The memory-broker path of `deno task bench:events` at one handler concurrency, for CPU profiles:
 * `deno run -A --cpu-prof --cpu-prof-dir=/tmp/prof scripts/_profile_events.ts --concurrency 1`.
 * Publishes `--messages` (1,000,000) validated messages through `getPublisher()` -> `EventBus` ->
 * `MemoryBroker` -> consumer with the bench's handler and window, and prints the rate.
 *
 * @module
 */

import { cpuUsage } from "node:process";
import { createLogger, Int, MinLength, Uuid } from "@fw/runtime";
import { EventBus, getPublisher, handler, MemoryBroker, topic } from "@fw/events";

const args = Object.fromEntries(
  Deno.args.map((a, i, all) => a.startsWith("--") ? [a.slice(2), all[i + 1]] : [])
    .filter((x) => x.length),
);
const MESSAGES = Number(args.messages ?? 1_000_000);
const CONCURRENCY = Number(args.concurrency ?? 1);
const WINDOW = 1000;

const Order = topic("bench.order", { id: Uuid, customer: MinLength(1), items: Int, total: Int });
const ID = "6f1c2a5e-8a3b-4f1e-9d2c-1b2a3c4d5e6f";

let handled = 0;
let wake: (() => void) | undefined;
let waitFor = 0;
let done!: () => void;
const finished = new Promise<void>((r) => done = r);
const sent = new Float64Array(MESSAGES);
const latencies = new Float64Array(MESSAGES);

const bus = new EventBus({
  transports: { main: new MemoryBroker() },
  logger: createLogger({ level: "warn" }),
});
await bus.add(
  handler(Order).options({ group: "bench", concurrency: CONCURRENCY }).handle(async (msg) => {
    const i = msg.payload.items;
    latencies[i] = performance.now() - sent[i];
    await Promise.resolve();
    handled++;
    if (wake && handled >= waitFor) {
      const w = wake;
      wake = undefined;
      w();
    }
    if (handled === MESSAGES) done();
  }),
);
await bus.start();
const publish = getPublisher(Order, { bus });
const cpu0 = cpuUsage();
const start = performance.now();
const inflight: Promise<unknown>[] = [];
for (let i = 0; i < MESSAGES; i++) {
  sent[i] = performance.now();
  inflight.push(publish({ id: ID, customer: "c", items: i, total: 5 }));
  if (inflight.length >= 256) {
    await Promise.all(inflight);
    inflight.length = 0;
  }
  if (i - handled >= WINDOW) {
    waitFor = i - (WINDOW >> 1);
    await new Promise<void>((r) => wake = r);
  }
}
await Promise.all(inflight);
await finished;
const ms = performance.now() - start;
const cpu = cpuUsage(cpu0);
const cpuNs = ((cpu.user + cpu.system) * 1000) / MESSAGES;
console.log(
  `memory@${CONCURRENCY} ${Math.round(MESSAGES / (ms / 1000)).toLocaleString("en")} msg/s, ${
    cpuNs.toFixed(0)
  } ns CPU per message`,
);
await bus.stop();
