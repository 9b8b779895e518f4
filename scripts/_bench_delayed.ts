/**
 * The delayed-delivery part of `deno task bench:events` (run alone with `--delayed`).
 *
 * - Burst: `--delayed-burst` (100,000) delayed messages all due within one second, on fw's Redis
 *   transport beside BullMQ delayed jobs and on fw's PostgreSQL transport beside pg-boss
 *   `startAfter`, in the same run, handler concurrency 50. The due second starts
 *   lead ms after the first publish (below); the `overran` column counts messages whose publish
 *   returned after their due time (0 when the lead was long enough). Throughput after the due
 *   time is messages / (first due time -> last handled); lateness is handled minus due, per message.
 *   Each system first publishes 2,000 delayed messages twice (a warm-up, then a measure of how
 *   fast it stores them); its lead (first publish -> first due time) is then 1.5 times its
 *   publishing time plus 3 s (at least `--delayed-lead`, 5,000 ms), so each has stored everything
 *   before the due second starts.
 * - Spread: `--delayed-spread` (10,000) delayed messages due evenly over 10 s, from 3 s after the
 *   first due time, on fw's memory, Redis, PostgreSQL, NATS and Deno KV transports: lateness p50,
 *   p99 and max against the targets (p99 <= 100 ms on memory, <= 500 ms on the others), with
 *   `denokv-raw` (Deno KV's own `enqueue` with `delay` and `listenQueue`) as the engine's floor.
 *   Each system's lead is measured as for the burst (at least 3 s), so lateness is delivery alone;
 *   a system that does not finish gets a row saying so.
 *
 * Every row also counts messages handled before their due time (`early`, must be 0) and twice.
 * Rounds (`--delayed-rounds`, 2) alternate the order of fw and its peer; tables show medians and
 * each round's throughput ratio (fw / peer) with the peer's own figure. `--delayed-systems`
 * picks rows (`redis,bullmq,sql,pg-boss,memory,nats,denokv`), `--delayed-part burst|spread` one part.
 *
 * @module
 */

import {
  bullmq,
  type DelayedSystem,
  type Engines,
  fwSystems,
  pgBoss,
  rawDenoKv,
} from "./_bench_delayed_systems.ts";
import { median } from "./_stats.ts";

/** Options of {@linkcode benchDelayed}. */
export interface DelayedBenchOptions extends Engines {
  readonly burst: number;
  readonly burstLeadMs: number;
  readonly spread: number;
  readonly rounds: number;
  readonly systems?: ReadonlySet<string>;
  /** Only the burst or only the spread part. */
  readonly part?: "burst" | "spread";
}

interface Result {
  publishMs: number;
  overran: number;
  early: number;
  twice: number;
  rate: number;
  p50: number;
  p99: number;
  max: number;
}

const CONCURRENCY = 50;

async function runOnce(
  system: DelayedSystem,
  n: number,
  windowMs: number,
  leadMs: number,
): Promise<Result> {
  const handledAt = new Float64Array(n);
  let handled = 0, twice = 0;
  let finished!: () => void;
  const done = new Promise<void>((r) => finished = r);
  const running = await system((i) => {
    if (handledAt[i] !== 0) return void twice++;
    handledAt[i] = Date.now();
    if (++handled === n) finished();
  }, CONCURRENCY);
  try {
    const start = Date.now();
    const first = start + leadMs;
    const due = Float64Array.from({ length: n }, (_, i) => first + Math.floor((i * windowMs) / n));
    let overran = 0;
    const inflight: Promise<unknown>[] = [];
    for (let i = 0; i < n; i++) {
      inflight.push(running.publish(i, due[i]).then(() => void (Date.now() > due[i] && overran++)));
      if (inflight.length >= 256) await Promise.all(inflight.splice(0));
    }
    await Promise.all(inflight);
    const publishMs = Date.now() - start;
    const limit = leadMs + windowMs + 180_000;
    let timer: ReturnType<typeof setTimeout> | undefined;
    await Promise.race([
      done,
      new Promise((_, reject) =>
        timer = setTimeout(() => reject(new Error(`only ${handled} of ${n} handled`)), limit)
      ),
    ]).finally(() => clearTimeout(timer));
    await new Promise((r) => setTimeout(r, 300)); // late duplicates
    const late = handledAt.map((at, i) => at - due[i]).sort();
    const pick = (p: number) => late[Math.min(n - 1, Math.floor(n * p))];
    const last = handledAt.reduce((a, b) => Math.max(a, b), 0);
    return {
      publishMs,
      overran,
      early: late.filter((x) => x < 0).length,
      twice,
      rate: n / (Math.max(1, last - first) / 1000),
      p50: pick(0.5),
      p99: pick(0.99),
      max: late[n - 1],
    };
  } finally {
    await running.close();
  }
}

const fmt = (x: number) => Math.round(x).toLocaleString("en");

function row(name: string, rs: Result[], extra = ""): string {
  const m = (f: (r: Result) => number) => median(rs.map(f));
  return `${name.padEnd(9)} ${(m((r) => r.publishMs) / 1000).toFixed(1).padStart(9)} ${
    fmt(m((r) => r.rate)).padStart(12)
  } ${m((r) => r.p50).toFixed(0).padStart(8)} ${m((r) => r.p99).toFixed(0).padStart(8)} ${
    m((r) => r.max).toFixed(0).padStart(8)
  } ${String(Math.max(...rs.map((r) => r.early))).padStart(6)} ${
    String(Math.max(...rs.map((r) => r.twice))).padStart(6)
  } ${String(Math.max(...rs.map((r) => r.overran))).padStart(8)}${extra}`;
}

const HEAD = "system    publish s  msgs/s due   p50 ms   p99 ms   max ms  early  twice  overran";

/**
 * Runs the delayed benchmarks and prints their tables (progress to stderr, tables to stdout).
 *
 * @param o Sizes, rounds, engines and systems.
 */
export async function benchDelayed(o: DelayedBenchOptions): Promise<void> {
  const want = (name: string) => !o.systems || o.systems.has(name);
  const fws = await fwSystems(o);
  const load = async () =>
    (await Deno.readTextFile("/proc/loadavg")).split(" ").slice(0, 3).join(" ");
  const pairs: Array<[string, DelayedSystem, string, DelayedSystem]> = [];
  const burst = o.part !== "spread";
  if (burst && (want("redis") || want("bullmq"))) {
    pairs.push(["fw-redis", fws.get("redis")!, "bullmq", bullmq(o)]);
  }
  if (burst && (want("sql") || want("pg-boss"))) {
    pairs.push(["fw-sql", fws.get("sql")!, "pg-boss", pgBoss(o)]);
  }
  if (pairs.length) {
    console.log(
      `\nDelayed burst: ${
        fmt(o.burst)
      } messages due within 1 s (lead: 1.5 x its publishing time + 3 s), concurrency ${CONCURRENCY}, ${o.rounds} rounds (medians); load ${await load()}`,
    );
  }
  /** Warms a system up, measures its publishing speed and returns its lead for `n` messages. */
  const leadOf = async (name: string, run: DelayedSystem, n: number, min: number) => {
    await runOnce(run, 2_000, 1000, 3_000); // warm-up: connections, JIT
    const probe = await runOnce(run, 2_000, 1000, 3_000);
    const lead = Math.max(min, Math.ceil((1.5 * probe.publishMs * n) / 2_000) + 3_000);
    console.error(`${name}: 2,000 stored in ${probe.publishMs} ms; lead ${lead} ms`);
    return lead;
  };
  const burstPair = async (
    fwName: string,
    fwRun: DelayedSystem,
    peerName: string,
    peerRun: DelayedSystem,
  ) => {
    const lead = new Map([
      [fwName, await leadOf(fwName, fwRun, o.burst, o.burstLeadMs)],
      [peerName, await leadOf(peerName, peerRun, o.burst, o.burstLeadMs)],
    ]);
    const results = new Map<string, Result[]>([[fwName, []], [peerName, []]]);
    const ratios: string[] = [];
    for (let round = 1; round <= o.rounds; round++) {
      const order: Array<[string, DelayedSystem]> = [[fwName, fwRun], [peerName, peerRun]];
      if (round % 2 === 0) order.reverse();
      for (const [name, run] of order) {
        const r = await runOnce(run, o.burst, 1000, lead.get(name)!);
        results.get(name)!.push(r);
        console.error(
          `round ${round} ${name.padEnd(9)} ${fmt(r.rate)} msgs/s after due, p99 late ${
            r.p99.toFixed(0)
          } ms, published in ${(r.publishMs / 1000).toFixed(1)} s`,
        );
      }
      const [f, p] = [results.get(fwName)!.at(-1)!, results.get(peerName)!.at(-1)!];
      ratios.push(`${(f.rate / p.rate).toFixed(2)} (${peerName} ${fmt(p.rate)})`);
    }
    console.log(HEAD);
    console.log(
      row(fwName, results.get(fwName)!, `   fw/${peerName} per round: ${ratios.join(", ")}`),
    );
    console.log(row(peerName, results.get(peerName)!));
  };
  for (const [fwName, fwRun, peerName, peerRun] of pairs) {
    try {
      await burstPair(fwName, fwRun, peerName, peerRun);
    } catch (error) {
      console.log(`${fwName} / ${peerName} did not finish: ${(error as Error).message}`);
    }
  }
  const targets: Record<string, number> = {
    memory: 100,
    redis: 500,
    sql: 500,
    nats: 500,
    denokv: 500,
  };
  const spread = o.part === "burst" ? [] : [...fws].filter(([name]) => want(name));
  if (want("denokv")) spread.push(["denokv-raw", rawDenoKv]);
  targets["denokv-raw"] = 500;
  if (spread.length === 0) return;
  console.log(
    `\nDelayed spread: ${
      fmt(o.spread)
    } messages due evenly over 10 s (lead: 1.5 x its publishing time + 3 s), ${o.rounds} rounds (medians); load ${await load()}`,
  );
  console.log(`${HEAD}   p99 target`);
  for (const [name, run] of spread) {
    const rs: Result[] = [];
    try {
      // Stored before the first is due, so the figures are delivery lateness alone.
      const lead = await leadOf(name, run, o.spread, 3_000);
      for (let round = 1; round <= o.rounds; round++) {
        rs.push(await runOnce(run, o.spread, 10_000, lead));
        console.error(`round ${round} ${name.padEnd(9)} p99 late ${rs.at(-1)!.p99.toFixed(0)} ms`);
      }
    } catch (error) {
      console.log(`${name.padEnd(9)} did not finish: ${(error as Error).message}`);
      continue;
    }
    const ok = median(rs.map((r) => r.p99)) <= targets[name] ? "met" : "NOT met";
    console.log(row(name, rs, `   <= ${targets[name]} ms: ${ok}`));
  }
}
