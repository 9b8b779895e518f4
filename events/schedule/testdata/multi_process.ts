/**
 * The multi-process schedule test shared by every engine: three processes
 * (`schedule_instance.ts`) run one every-second schedule; one is SIGKILLed half a second after a
 * tick, mid-way through the run; once ten ticks have run, the others stop. Every tick from the
 * first to the last must have run exactly once. Bounded: about 15 s.
 *
 * @module
 */

import assert from "node:assert/strict";

const INSTANCE = new URL("./schedule_instance.ts", import.meta.url).pathname;
const TICKS = 10;
const LIMIT_MS = 20_000;

interface Ticks {
  /** Tick times in run order, with the process and attempt. */
  readonly runs: Array<{ tick: number; pid: number; attempt: number }>;
}

async function readRuns(file: string): Promise<Ticks["runs"]> {
  let text = "";
  try {
    text = await Deno.readTextFile(file);
  } catch (err) {
    if (!(err instanceof Deno.errors.NotFound)) throw err;
  }
  return text.split("\n").filter(Boolean).map((line) => {
    const [tick, pid, attempt] = line.split(" ").map(Number);
    return { tick, pid, attempt };
  });
}

function spawn(engine: string, ns: string, file: string) {
  const child = new Deno.Command(Deno.execPath(), {
    args: ["run", "-A", "--unstable-kv", INSTANCE, engine, ns, file],
    stdout: "piped",
    stderr: "inherit",
  }).spawn();
  const reader = child.stdout.pipeThrough(new TextDecoderStream()).getReader();
  const ready = (async () => {
    let seen = "";
    while (!seen.includes("ready")) {
      const { value, done } = await reader.read();
      if (done) throw new Error(`instance ${child.pid} ended before it was ready`);
      seen += value;
    }
    // Keep draining stdout so the child never blocks on it.
    (async () => {
      while (!(await reader.read()).done) { /* drain */ }
    })().catch(() => {});
  })();
  return { child, ready };
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/**
 * Runs the test and asserts each tick ran once.
 *
 * @param engine `redis`, `sql`, `denokv` or `nats`.
 * @param ns The namespace (key prefix, schema, KV path, stream) for this run.
 * @returns The runs, for extra assertions.
 */
export async function threeInstancesOneKilled(engine: string, ns: string): Promise<Ticks> {
  const file = await Deno.makeTempFile({ prefix: "fw-schedule-runs-" });
  const instances = [0, 1, 2].map(() => spawn(engine, ns, file));
  let end = Infinity;
  let killed: number | undefined;
  let killedAt = 0;
  try {
    let timer: ReturnType<typeof setTimeout> | undefined;
    await Promise.race([
      Promise.all(instances.map((i) => i.ready)),
      new Promise((_, reject) => {
        timer = setTimeout(() => reject(new Error("instances not ready in 30 s")), 30_000);
      }),
    ]).finally(() => clearTimeout(timer));
    // The ten ticks are counted from here: a loaded machine may take a while to start processes.
    end = Date.now() + LIMIT_MS;
    for (;;) {
      const runs = await readRuns(file);
      const distinct = new Set(runs.map((r) => r.tick)).size;
      if (killed === undefined && distinct >= 3) {
        // Half a second after a tick: between runs (a run takes a few ms).
        await sleep(1500 - (Date.now() % 1000));
        const victim = instances[0].child;
        victim.kill("SIGKILL");
        await victim.status;
        killed = victim.pid;
        killedAt = Date.now();
      }
      if (distinct >= TICKS + 1) break;
      if (Date.now() > end) throw new Error(`only ${distinct} ticks ran in ${LIMIT_MS} ms`);
      await sleep(100);
    }
  } finally {
    for (const { child } of instances) {
      if (child.pid === killed) continue;
      try {
        child.kill("SIGTERM");
      } catch { /* ended already */ }
      await child.status;
    }
  }
  const runs = await readRuns(file);
  await Deno.remove(file);
  const ticks = runs.map((r) => r.tick);
  const first = Math.min(...ticks);
  const last = Math.max(...ticks);
  const counts = new Map<number, number>();
  for (const t of ticks) counts.set(t, (counts.get(t) ?? 0) + 1);
  const twice = [...counts].filter(([, n]) => n > 1).map(([t]) => new Date(t).toISOString());
  assert.deepEqual(twice, [], "no tick ran twice");
  const missing: string[] = [];
  for (let t = first; t <= last; t += 1000) {
    if (!counts.has(t)) missing.push(new Date(t).toISOString());
  }
  assert.deepEqual(missing, [], "no tick was missed between the first and the last");
  assert.ok(counts.size >= TICKS, `${counts.size} ticks ran`);
  assert.ok(killed !== undefined);
  const after = runs.filter((r) => r.tick > killedAt);
  assert.ok(after.length >= 3, `${after.length} ticks ran after the SIGKILL`);
  assert.ok(after.every((r) => r.pid !== killed), "the killed process ran nothing after");
  return { runs };
}
