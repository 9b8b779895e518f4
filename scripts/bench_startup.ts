/**
 * `deno task bench:startup`: cold start of a bare `Deno.serve`, Hono with one route, fw with one
 * route and each example app, in the same run.
 *
 * For each subject a fresh `deno run -A` process is spawned; the benchmark polls its port and
 * reports the time from spawn to the first 200 response, and the process's resident memory
 * (`VmRSS` from `/proc/<pid>/status`) and the CPU time it has used (all threads, from
 * `/proc/<pid>/task/<tid>/schedstat`; steadier than wall time on a loaded machine) right after that
 * response. Rounds alternate the order of the
 * subjects to cancel drift; one untimed warm-up run per subject first fills Deno's caches
 * (transpiled modules, npm packages), as on any host that starts the same code again. Medians,
 * per-round ratios and the ratios of the medians to bare and to Hono are printed.
 *
 * `bare+ALS` is bare plus an `AsyncLocalStorage` (`node:async_hooks`), which fw's async context
 * needs: what Deno's Node.js compatibility layer alone adds to a cold start.
 *
 * Subjects run with `NODE_ENV=production` and `EVENTS_BROKER_PORT=0` (the example app's local
 * events broker takes a free port rather than 4222).
 *
 * Verdicts: `examples/app` / bare <= 2.0 and fw / Hono <= 1.25 (medians of start times). They are
 * printed only when bare's median start time is within 1.5x its quiet figure in `_quiet.ts`; a
 * slower bare means a loaded machine (whose slow baseline flatters every ratio), and the script says
 * to run again. Bare's own start time is printed for each round beside the ratios.
 *
 * `--instructions` counts instead, once per subject, the instructions each process executes from
 * spawn to its first 200 under valgrind's callgrind (`valgrind` must be installed): a figure a
 * loaded machine barely moves, for comparing changes while others use the machine (the ratios of
 * instructions are not those of times: waiting costs no instructions).
 *
 * `--js` adds `fw (JS)` and `examples/app (JS)`: the same programs with every local module
 * replaced by Deno's own JavaScript emit of it, without its source map (`_as_js.ts`), which shows
 * in the same run what loading TypeScript costs each of them.
 *
 * Options: `--rounds <n>` (default 7), `--only <names>` (comma-separated, for example
 * `--only bare,fw`), `--instructions`, `--js`.
 *
 * @module
 */

import { writeAsJs } from "./_as_js.ts";
import { startCounted } from "./_callgrind.ts";
import { checkBaseline, loadAverage, verdict } from "./_quiet.ts";
import { median } from "./_stats.ts";

const countInstructions = Deno.args.includes("--instructions");
const asJs = Deno.args.includes("--js");
const args = Object.fromEntries(
  Deno.args.filter((a) => a !== "--instructions" && a !== "--js").map((a, i, all) =>
    a.startsWith("--") ? [a.slice(2), all[i + 1]] : []
  )
    .filter((x) => x.length),
);
const rounds = Number(args.rounds ?? 7);
const root = new URL("../", import.meta.url);

interface Subject {
  name: string;
  /** Entry file, relative to the repository root. */
  entry: string;
  /** Path answered with 200. */
  path: string;
}
const ALL: Subject[] = [
  { name: "bare", entry: "scripts/_bench_startup_bare.ts", path: "/" },
  { name: "bare+ALS", entry: "scripts/_bench_startup_bare_als.ts", path: "/" },
  { name: "hono", entry: "scripts/_bench_startup_hono.ts", path: "/" },
  { name: "fw", entry: "scripts/_bench_startup_fw.ts", path: "/" },
  { name: "examples/app", entry: "examples/app/src/main.ts", path: "/health" },
  { name: "examples/streams", entry: "examples/streams/src/main.ts", path: "/stats" },
];
const only = (args.only as string | undefined)?.split(",");
const subjects = only ? ALL.filter((s) => only.includes(s.name)) : [...ALL];

let nextPort = 18900;

/** Reads a process's resident set size in MB. */
async function rssMb(pid: number): Promise<number> {
  const status = await Deno.readTextFile(`/proc/${pid}/status`);
  const kb = Number(/VmRSS:\s+(\d+)/.exec(status)?.[1]);
  return kb / 1024;
}

/**
 * CPU time a process has used so far, in ms: the sum over its threads of the time spent running
 * (`/proc/<pid>/task/<tid>/schedstat`). Less sensitive than wall time to a loaded machine.
 */
async function cpuMs(pid: number): Promise<number> {
  let ns = 0;
  for await (const task of Deno.readDir(`/proc/${pid}/task`)) {
    try {
      ns += Number(
        (await Deno.readTextFile(`/proc/${pid}/task/${task.name}/schedstat`)).split(" ")[0],
      );
    } catch {
      // the thread ended meanwhile
    }
  }
  return ns / 1e6;
}

interface Sample {
  ms: number;
  cpu: number;
  rss: number;
}

/** Starts a subject, waits for its first 200, measures, stops it. */
async function run(subject: Subject): Promise<Sample> {
  const port = nextPort++;
  const url = `http://127.0.0.1:${port}${subject.path}`;
  const start = performance.now();
  const child = new Deno.Command(Deno.execPath(), {
    args: ["run", "-A", new URL(subject.entry, root).pathname],
    cwd: root.pathname,
    stdout: "null",
    stderr: "piped",
    env: { PORT: String(port), NODE_ENV: "production", EVENTS_BROKER_PORT: "0" },
  }).spawn();
  const stderr = child.stderr.pipeThrough(new TextDecoderStream()).getReader();
  let errors = "";
  (async () => {
    for (;;) {
      const { value, done } = await stderr.read();
      if (done) return;
      errors += value;
    }
  })();
  let exited = false;
  child.status.then(() => exited = true);
  try {
    for (;;) {
      if (exited) throw new Error(`${subject.name} exited before answering:\n${errors}`);
      if (performance.now() - start > 30_000) {
        throw new Error(`${subject.name} did not answer within 30 s:\n${errors}`);
      }
      try {
        const res = await fetch(url, { headers: { connection: "close" } });
        await res.body?.cancel();
        if (res.status === 200) break;
        throw new Error(`${subject.name} answered ${res.status} on ${subject.path}`);
      } catch (e) {
        if (!(e instanceof TypeError)) throw e; // connection refused: not listening yet
        await new Promise((r) => setTimeout(r, 1));
      }
    }
    const ms = performance.now() - start;
    const cpu = await cpuMs(child.pid);
    return { ms, cpu, rss: await rssMb(child.pid) };
  } finally {
    if (!exited) child.kill("SIGKILL");
    await child.status;
  }
}

/**
 * Runs a subject under callgrind until its first 200, dumps the count and returns the number of
 * instructions it executed (all threads).
 */
async function instructions(subject: Subject): Promise<number> {
  const port = nextPort++;
  const counted = await startCounted(new URL(subject.entry, root).pathname, [], {
    cwd: root.pathname,
    env: { PORT: String(port), NODE_ENV: "production", EVENTS_BROKER_PORT: "0" },
  });
  try {
    const start = performance.now();
    for (;;) {
      if (performance.now() - start > 300_000) throw new Error(`${subject.name}: no answer`);
      try {
        const res = await fetch(`http://127.0.0.1:${port}${subject.path}`, {
          headers: { connection: "close" },
        });
        await res.body?.cancel();
        break;
      } catch {
        await new Promise((r) => setTimeout(r, 20));
      }
    }
    return await counted.count();
  } finally {
    await counted.close();
  }
}

const loadBefore = await loadAverage();
for (const s of subjects) await run(s); // warm-up: fill the caches
/** Where `--js` writes its copies (removed at the end). */
const JS_DIR = ".tmp/bench-js";
if (asJs) {
  const cleanup = () => {
    try {
      Deno.removeSync(new URL(JS_DIR, root), { recursive: true });
    } catch {
      // removed already
    }
  };
  addEventListener("unload", cleanup);
  addEventListener("error", cleanup);
  addEventListener("unhandledrejection", cleanup);
  Deno.addSignalListener("SIGINT", () => {
    cleanup();
    Deno.exit(130);
  });
  // (the warm-up above filled Deno's emit cache, which the copies are made of)
  for (const s of subjects.filter((s) => s.name === "fw" || s.name === "examples/app")) {
    const entry = await writeAsJs(root, s.entry, `${JS_DIR}/${s.name.replace("/", "-")}`);
    const copy = { name: `${s.name} (JS)`, entry, path: s.path };
    await run(copy); // its V8 code cache, as the warm-up gives every subject
    subjects.push(copy);
  }
}

if (countInstructions) {
  const counts: Record<string, number> = {};
  for (const s of subjects) counts[s.name] = await instructions(s);
  console.log(`\ninstructions from spawn to the first 200 (callgrind), ${Deno.build.target}`);
  console.log("| subject | instructions (M) | /bare | /hono |");
  console.log("| --- | ---: | ---: | ---: |");
  for (const s of subjects) {
    const n = counts[s.name];
    const of = (b: string) => counts[b] === undefined ? "-" : (n / counts[b]).toFixed(2);
    console.log(`| ${s.name} | ${(n / 1e6).toFixed(1)} | ${of("bare")} | ${of("hono")} |`);
  }
  Deno.exit(0);
}

const samples: Record<string, Sample[]> = Object.fromEntries(subjects.map((s) => [s.name, []]));
for (let r = 0; r < rounds; r++) {
  const order = r % 2 === 0 ? subjects : [...subjects].reverse();
  for (const s of order) samples[s.name].push(await run(s));
}

const ms = Object.fromEntries(
  subjects.map((s) => [s.name, median(samples[s.name].map((x) => x.ms))]),
);
const cpu = Object.fromEntries(
  subjects.map((s) => [s.name, median(samples[s.name].map((x) => x.cpu))]),
);
const rss = Object.fromEntries(
  subjects.map((s) => [s.name, median(samples[s.name].map((x) => x.rss))]),
);
const perRound = (name: string, of: string) =>
  samples[name].map((x, i) => (x.ms / samples[of][i].ms).toFixed(2)).join(" ");
const ratio = (a: number | undefined, b: number | undefined) =>
  a !== undefined && b !== undefined ? (a / b).toFixed(2) : "-";

console.log(
  `\nstart to first 200 and RSS after it, median of ${rounds} rounds, ${Deno.build.target}; ` +
    `load average ${loadBefore} before, ${await loadAverage()} after`,
);
console.log(
  "| subject | start ms | /bare | /hono | CPU ms | /bare | /hono | RSS MB | RSS /bare |",
);
console.log("| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |");
for (const s of subjects) {
  const n = s.name;
  console.log(
    `| ${n} | ${ms[n].toFixed(1)} | ${ratio(ms[n], ms.bare)} | ${ratio(ms[n], ms.hono)} | ${
      cpu[n].toFixed(1)
    } | ${ratio(cpu[n], cpu.bare)} | ${ratio(cpu[n], cpu.hono)} | ${rss[n].toFixed(1)} | ${
      ratio(rss[n], rss.bare)
    } |`,
  );
}
console.log("\nper-round start-time ratios:");
for (const s of subjects) {
  const parts = [];
  if (ms.bare !== undefined && s.name !== "bare") parts.push(`/bare ${perRound(s.name, "bare")}`);
  if (ms.hono !== undefined && s.name !== "hono") parts.push(`/hono ${perRound(s.name, "hono")}`);
  if (parts.length) console.log(`  ${s.name}: ${parts.join("; ")}`);
}
if (ms.bare !== undefined) {
  console.log(
    `  bare's own start ms per round: ${samples.bare.map((x) => x.ms.toFixed(1)).join(" ")}`,
  );
  const check = checkBaseline("startup/bare", ms.bare);
  console.log(`\n${check.text}`);
  const goal = (name: string, of: string, bound: number) => {
    if (ms[name] === undefined || ms[of] === undefined) return;
    const r = ms[name] / ms[of];
    console.log(
      verdict(
        [check],
        `${name} / ${of} ${r.toFixed(2)} (goal <= ${bound}): ${r <= bound ? "met" : "NOT met"}`,
      ),
    );
  };
  goal("examples/app", "bare", 2.0);
  goal("fw", "hono", 1.25);
}
