/**
 * The memory-broker path of `deno task bench:events`, for CPU profiles and for comparing handler
 * concurrencies in one process:
 * `deno run -A --cpu-prof --cpu-prof-dir=/tmp/prof scripts/_profile_events.ts --concurrency 1`.
 * Publishes `--messages` (1,000,000) validated messages through `getPublisher()` -> `EventBus` ->
 * `MemoryBroker` -> consumer with the bench's handler, window and publish batches (256 publish
 * promises awaited at a time), and prints the rate and the CPU per message.
 *
 * `--concurrency 1,100 --reps 8 --messages 200000` runs each concurrency `--reps` times,
 * alternating (a new broker and bus per run, as the bench makes them), after one uncounted warm-up
 * run of each, and prints the medians: the process CPU (all threads, what the bench reports) and,
 * on Linux, the main thread's alone (`/proc/self/task/<pid>/schedstat`), which leaves out the
 * collector's and the compiler's helper threads. Alternating in one process keeps the machine's
 * load from favouring one concurrency, which separate bench rounds on a shared machine do not.
 *
 * @module
 */

import { cpuUsage } from "node:process";
import { createLogger, Int, MinLength, Uuid } from "@fw/runtime";
import { EventBus, getPublisher, handler, MemoryBroker, topic } from "@fw/events";
import { median } from "./_stats.ts";

const args = Object.fromEntries(
  Deno.args.map((a, i, all) => a.startsWith("--") ? [a.slice(2), all[i + 1]] : [])
    .filter((x) => x.length),
);
const MESSAGES = Number(args.messages ?? 1_000_000);
const CONCURRENCIES = String(args.concurrency ?? 1).split(",").map(Number);
const REPS = Number(args.reps ?? 1);
const WINDOW = 1000;

const Order = topic("bench.order", { id: Uuid, customer: MinLength(1), items: Int, total: Int });
const ID = "6f1c2a5e-8a3b-4f1e-9d2c-1b2a3c4d5e6f";

/** The main thread's CPU time in ns (Linux), else `undefined`. */
function mainThreadNs(): number | undefined {
  try {
    return Number(Deno.readTextFileSync(`/proc/self/task/${Deno.pid}/schedstat`).split(" ")[0]);
  } catch {
    return undefined;
  }
}

interface Run {
  rate: number;
  cpuNs: number;
  mainNs: number | undefined;
}

async function run(concurrency: number): Promise<Run> {
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
    handler(Order).options({ group: "bench", concurrency }).handle(async (msg) => {
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
  const main0 = mainThreadNs();
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
  const main1 = mainThreadNs();
  await bus.stop();
  return {
    rate: MESSAGES / (ms / 1000),
    cpuNs: ((cpu.user + cpu.system) * 1000) / MESSAGES,
    mainNs: main0 === undefined || main1 === undefined ? undefined : (main1 - main0) / MESSAGES,
  };
}

const fmt = (n: number | undefined) => n === undefined ? "-" : n.toFixed(0);
const runs = new Map<number, Run[]>();
for (let rep = REPS > 1 ? 0 : 1; rep <= REPS; rep++) {
  for (const c of rep % 2 ? CONCURRENCIES : [...CONCURRENCIES].reverse()) {
    const r = await run(c);
    console.log(
      `${rep === 0 ? "warm-up " : ""}memory@${c} ${
        Math.round(r.rate).toLocaleString("en")
      } msg/s, ${fmt(r.cpuNs)} ns CPU per message (main thread ${fmt(r.mainNs)})`,
    );
    if (rep > 0) runs.set(c, [...(runs.get(c) ?? []), r]);
  }
}
if (REPS > 1) {
  for (const [c, rs] of runs) {
    const main = rs.map((r) => r.mainNs).filter((x) => x !== undefined);
    console.log(
      `memory@${c} median of ${rs.length}: ${
        fmt(median(rs.map((r) => r.cpuNs)))
      } ns CPU per message (main thread ${fmt(main.length ? median(main) : undefined)}); per run ${
        rs.map((r) => fmt(r.cpuNs)).join(" ")
      }`,
    );
  }
}
