/**
 * `deno task bench:http`: bare `Deno.serve`, Hono and fw side by side in one run, driven by `wrk`.
 *
 * Scenarios: (a) `GET /` text; (b) `GET /users/:id?limit=` with `Int` param and query schemas;
 * (c) `POST /orders` with a 7-field JSON body and a `.returns()` schema; (d) (b) in an app of 200
 * routes; (e) the cost of route policies: (b) with `.cors()` and a passing `.secure()` (an HS256
 * bearer token and an allowed `Origin` on every request, verified by `oauth()`) against (b)
 * without them, with Hono's `cors()` + `jwt()` on the same route as a reference. Each server
 * runs in its own process; rounds alternate the order of the servers to cancel drift, and the
 * median req/s of the rounds is reported with the ratios fw/bare and fw/Hono (for (e):
 * fw+policies/fw, the share of throughput the policies cost); (f) the cost of tracing: (b) with
 * `telemetry()` making a SERVER span per request (always-on sampler, batching exporter) against
 * (b) untraced, which is also what an app without `telemetry()` runs (no tracing code loaded);
 * (g) the cost of the operations dashboard while no page is open: (b) with `dashboard()` installed
 * against (b) without it and with one empty middleware (its route metrics are counted on every
 * request).
 * Hono and bare do no validation; fw validates everything.
 *
 * Servers run with `NODE_ENV=production`, as deployed: fw's response validation against
 * `.returns()` is a development aid and is off in production (pass `--dev` to keep it on).
 *
 * Each scenario also prints its baseline's own req/s per round and median (bare `Deno.serve` for
 * (a)-(d), fw on (b) for the rows that compare fw variants) against the baseline's quiet figure in
 * `_quiet.ts`. The verdicts at the end (fw/bare >= 0.95 on (b) and (d), the cost of policies,
 * tracing and the dashboard) are printed only for scenarios whose baseline ran within 1.5x of its
 * quiet figure; otherwise the machine was loaded and the script says to run again. Each scenario
 * also prints the server's CPU time per request (user + system, `/proc/<pid>/stat`) for each kind,
 * a figure a loaded machine moves less than req/s.
 *
 * `--instructions` counts instead the instructions each server executes per request under
 * valgrind's callgrind (`valgrind` must be installed), for scenarios (a)-(d) (default (b) and
 * (d), the ones with a goal): the server is warmed up with `wrk` for `--warm` seconds (default
 * 60: under callgrind a request costs about 300 µs until V8 has optimised the code), its counters
 * are set to 0, `wrk` runs for `--measure` seconds (default 10), and the count is divided by the
 * requests `wrk` completed. The figure depends only on the code, not on how fast or busy the
 * machine is, so it gives a verdict where req/s cannot: bare's instructions per request over fw's
 * is what fw/bare in req/s would be if every instruction cost the same. It leaves out the time
 * in the kernel (the socket's system calls), about the same per request for every server, which
 * only brings a ratio of times closer to 1.
 *
 * Options: `--duration <s>` (default 4), `--rounds <n>` (default 3), `--connections <n>` (50),
 * `--only <letters>` (for example `--only ac`), `--traced` (the traced row only, like
 * `--only f`; `--only g` runs the dashboard row alone), `--dev`, `--instructions` (with
 * `--warm <s>` and `--measure <s>`).
 *
 * @module
 */

import { BENCH_ORIGIN, benchToken } from "./_bench_auth.ts";
import { type BaselineCheck, checkBaseline, loadAverage, verdict } from "./_quiet.ts";
import { startCounted } from "./_callgrind.ts";
import { median } from "./_stats.ts";

const dev = Deno.args.includes("--dev");
const tracedOnly = Deno.args.includes("--traced");
const countInstructions = Deno.args.includes("--instructions");
const args = Object.fromEntries(
  Deno.args.filter((a) => a !== "--dev" && a !== "--traced" && a !== "--instructions")
    .map((a, i, all) => a.startsWith("--") ? [a.slice(2), all[i + 1]] : [])
    .filter((x) => x.length),
);
const duration = Number(args.duration ?? 4);
const rounds = Number(args.rounds ?? 3);
const connections = Number(args.connections ?? 50);

try {
  await new Deno.Command("wrk", { args: ["--version"], stdout: "null", stderr: "null" }).output();
} catch {
  console.error(
    "wrk is not installed: `apt-get install wrk` (Debian/Ubuntu) or `brew install wrk` (macOS)",
  );
  Deno.exit(1);
}

const ORDER = JSON.stringify({
  id: "7c9e6679-7425-40de-944b-e07fc1f90ae7",
  customer: "Ada",
  items: [{ sku: "A-1", qty: 2 }, { sku: "B-2", qty: 1 }],
  total: 42.5,
  currency: "EUR",
  note: "ring twice",
  placedAt: "2026-11-22T10:00:00Z",
});
const postScript = await Deno.makeTempFile({ suffix: ".lua" });
await Deno.writeTextFile(
  postScript,
  `wrk.method = "POST"\nwrk.body = '${ORDER}'\nwrk.headers["Content-Type"] = "application/json"\n`,
);

interface Scenario {
  name: string;
  path: string;
  routes: number;
  post?: boolean;
  /** Servers compared (default bare, hono, fw). */
  kinds?: string[];
  /** Extra request headers. */
  headers?: Record<string, string>;
}
const scenarios: Scenario[] = [
  { name: "(a) GET / text", path: "/", routes: 3 },
  { name: "(b) GET /users/:id?limit=", path: "/users/42?limit=10", routes: 3 },
  { name: "(c) POST /orders 7-field body", path: "/orders", routes: 3, post: true },
  { name: "(d) (b) with 200 routes", path: "/users/42?limit=10", routes: 200 },
  {
    name: "(e) (b) with .cors() + .secure() vs without",
    path: "/users/42?limit=10",
    routes: 3,
    kinds: ["fw", "fw-policies", "hono-policies", "bare", "bare-cors"],
    headers: { authorization: `Bearer ${await benchToken()}`, origin: BENCH_ORIGIN },
  },
  {
    name: "(f) (b) traced vs untraced",
    path: "/users/42?limit=10",
    routes: 3,
    kinds: ["fw", "fw-traced", "fw+sdk"],
  },
  {
    name: "(g) (b) with dashboard() and no page open vs without",
    path: "/users/42?limit=10",
    routes: 3,
    kinds: ["fw", "fw-dashboard", "fw-middleware"],
  },
];
const only = (tracedOnly ? "f" : args.only) as string | undefined;
const selected = only ? scenarios.filter((s) => only.includes(s.name[1])) : scenarios;
const KINDS = ["bare", "hono", "fw"];

async function start(kind: string, port: number, routes: number): Promise<Deno.ChildProcess> {
  const child = new Deno.Command(Deno.execPath(), {
    args: [
      "run",
      "-A",
      new URL("./_bench_servers.ts", import.meta.url).pathname,
      kind,
      String(port),
      String(routes),
    ],
    stdout: "piped",
    stderr: "inherit",
    env: { NODE_ENV: dev ? "development" : "production" },
  }).spawn();
  await serverReady(child, kind);
  return child;
}

/** Waits for a bench server's `ready` line on its stdout, then lets the rest go. */
async function serverReady(child: Deno.ChildProcess, kind: string): Promise<void> {
  const reader = child.stdout.pipeThrough(new TextDecoderStream()).getReader();
  for (let seen = ""; !seen.includes("ready");) {
    const { value, done } = await reader.read();
    if (done) throw new Error(`${kind} server exited before it was ready`);
    seen += value;
  }
  reader.releaseLock();
  child.stdout.cancel().catch(() => {});
}

/** CPU seconds a process has used (user + system, from `/proc/<pid>/stat`), or NaN off Linux. */
async function cpuSeconds(pid: number): Promise<number> {
  try {
    const fields = (await Deno.readTextFile(`/proc/${pid}/stat`)).split(") ")[1].split(" ");
    return (Number(fields[11]) + Number(fields[12])) / 100; // clock ticks, USER_HZ = 100
  } catch {
    return NaN;
  }
}

/** The number of requests of a wrk run (its "N requests in" line). */
let lastRequests = 0;

async function wrk(url: string, s: Scenario, seconds = duration): Promise<number> {
  const headers = Object.entries(s.headers ?? {}).flatMap(([k, v]) => ["-H", `${k}: ${v}`]);
  const out = await new Deno.Command("wrk", {
    args: [
      "-t1",
      `-c${connections}`,
      `-d${seconds}s`,
      ...(s.post ? ["-s", postScript] : []),
      ...headers,
      url,
    ],
    stdout: "piped",
    stderr: "piped",
  }).output();
  const text = new TextDecoder().decode(out.stdout);
  if (/Non-2xx or 3xx responses/.test(text)) {
    throw new Error(`non-2xx responses from ${url}:\n${text}`);
  }
  lastRequests = Number(/(\d+) requests in/.exec(text)?.[1] ?? NaN);
  const m = /Requests\/sec:\s+([\d.]+)/.exec(text);
  if (!m) throw new Error(`could not read wrk output:\n${text}`);
  return Number(m[1]);
}

/**
 * `--instructions`: one server per kind under callgrind, warmed up, then counted over `wrk`'s
 * measured run; prints instructions per request and the ratios, with the verdicts on (b), (d).
 */
async function instructionsPerRequest(list: Scenario[]): Promise<void> {
  const warm = Number(args.warm ?? 60);
  const measure = Number(args.measure ?? 10);
  const table: Array<[string, Record<string, number>]> = [];
  let port = 18700;
  for (const s of list) {
    const counts: Record<string, number> = {};
    for (const kind of KINDS) {
      const p = port++;
      const counted = await startCounted(
        new URL("./_bench_servers.ts", import.meta.url).pathname,
        [kind, String(p), String(s.routes)],
        { env: { NODE_ENV: dev ? "development" : "production" }, jit: true, stdout: "piped" },
      );
      try {
        await serverReady(counted.child, kind);
        const url = `http://127.0.0.1:${p}${s.path}`;
        await wrk(url, s, warm);
        await counted.zero();
        await wrk(url, s, measure);
        if (!(lastRequests > 0)) {
          throw new Error(`${s.name} ${kind}: no request completed; give more --warm or --measure`);
        }
        counts[kind] = await counted.count() / lastRequests;
        console.log(
          `${s.name} ${kind}: ${counts[kind].toFixed(0)} instructions per request ` +
            `(${lastRequests} requests under callgrind)`,
        );
      } finally {
        await counted.close();
      }
    }
    table.push([s.name, counts]);
  }
  console.log(
    `
instructions per request (callgrind), after ${warm}s of warm-up, over ${measure}s of ` +
      `wrk -t1 -c${connections}, ${Deno.build.target}; ratios as throughput (the other's ` +
      `instructions over fw's)`,
  );
  console.log("| scenario | bare | hono | fw | fw/bare | fw/hono |");
  console.log("| --- | ---: | ---: | ---: | ---: | ---: |");
  for (const [name, c] of table) {
    console.log(
      `| ${name} | ${c.bare.toFixed(0)} | ${c.hono.toFixed(0)} | ${c.fw.toFixed(0)} | ${
        (c.bare / c.fw).toFixed(2)
      } | ${(c.hono / c.fw).toFixed(2)} |`,
    );
  }
  for (const [name, c] of table) {
    if (name[1] !== "b" && name[1] !== "d") continue;
    const r = c.bare / c.fw;
    console.log(
      `${name}: fw/bare ${r.toFixed(2)} in instructions per request (goal >= 0.95): ${
        r >= 0.95 ? "met" : "NOT met"
      }`,
    );
  }
}

if (countInstructions) {
  const plain = (only ? selected : scenarios.filter((s) => "bd".includes(s.name[1])))
    .filter((s) => s.kinds === undefined);
  await instructionsPerRequest(plain);
  await Deno.remove(postScript);
  Deno.exit(0);
}
const results: Record<string, Record<string, number>> = {};
const policyResults: Record<string, Record<string, number>> = {};
const tracedResults: Record<string, { medians: Record<string, number>; ratios: string }> = {};
const dashboardResults: Record<string, { m: Record<string, number>; perRound: string }> = {};
let port = 18300;
/** The baseline check of each scenario, and the verdicts printed at the end. */
const verdicts: Array<[BaselineCheck, string]> = [];
const loadBefore = await loadAverage();

for (const s of selected) {
  const kinds = s.kinds ?? KINDS;
  const runs: Record<string, number[]> = Object.fromEntries(kinds.map((k) => [k, []]));
  /** Server CPU µs per request, per kind and round (steadier than req/s on a loaded machine). */
  const cpu: Record<string, number[]> = Object.fromEntries(kinds.map((k) => [k, []]));
  for (let r = 0; r < rounds; r++) {
    const order = r % 2 === 0 ? [...kinds] : [...kinds].reverse();
    for (const kind of order) {
      const p = port++;
      const child = await start(kind, p, s.routes);
      try {
        await wrk(`http://127.0.0.1:${p}${s.path}`, s); // warm-up (JIT)
        const before = await cpuSeconds(child.pid);
        runs[kind].push(await wrk(`http://127.0.0.1:${p}${s.path}`, s));
        cpu[kind].push((await cpuSeconds(child.pid) - before) / lastRequests * 1e6);
      } finally {
        child.kill("SIGTERM");
        await child.status;
      }
    }
  }
  const medians = Object.fromEntries(kinds.map((k) => [k, median(runs[k])]));
  // The baseline: bare Deno.serve for (a)-(d), untraced fw on (b) for the rows of fw variants.
  const base = s.kinds === undefined ? "bare" : "fw";
  const check = checkBaseline(
    base === "bare" ? `http/${s.name[1]}/bare` : "http/b/fw",
    medians[base],
  );
  console.log(
    `    ${base} req/s per round: ${runs[base].map((x) => x.toFixed(0)).join(" ")}; ${check.text}`,
  );
  console.log(
    `    server CPU µs per request, median (rounds): ${
      kinds.map((k) =>
        `${k} ${median(cpu[k]).toFixed(2)} (${cpu[k].map((x) => x.toFixed(2)).join(" ")})`
      )
        .join("; ")
    }`,
  );
  if (kinds.includes("fw-dashboard")) {
    const cost = (1 - medians["fw-dashboard"] / medians.fw) * 100;
    const mw = (1 - medians["fw-middleware"] / medians.fw) * 100;
    verdicts.push([
      check,
      `${s.name}: dashboard() costs ${cost.toFixed(1)}% of fw's throughput, ` +
      `an empty middleware ${mw.toFixed(1)}%`,
    ]);
  } else if (kinds.includes("fw-traced")) {
    const cost = (1 - medians["fw-traced"] / medians.fw) * 100;
    verdicts.push([
      check,
      `${s.name}: tracing costs ${cost.toFixed(1)}% (bound 15%): ${cost <= 15 ? "within" : "OVER"}`,
    ]);
  } else if (s.kinds !== undefined) {
    const cost = (1 - medians["fw-policies"] / medians.fw) * 100;
    verdicts.push([check, `${s.name}: the policies cost ${cost.toFixed(1)}% of fw's throughput`]);
  } else {
    const r = medians.fw / medians.bare;
    const goal = s.name[1] === "b" || s.name[1] === "d" ? 0.95 : undefined;
    verdicts.push([
      check,
      `${s.name}: fw/bare ${r.toFixed(2)}` +
      (goal === undefined ? "" : ` (goal >= ${goal}): ${r >= goal ? "met" : "NOT met"}`),
    ]);
  }
  if (kinds.includes("fw-dashboard")) {
    const m = medians;
    const perRound = runs.fw.map((fw, i) => (runs["fw-dashboard"][i] / fw).toFixed(3)).join(" ");
    dashboardResults[s.name] = { m, perRound };
    console.log(
      `${s.name}: fw ${m.fw.toFixed(0)}  fw+dashboard ${m["fw-dashboard"].toFixed(0)}  ` +
        `ratio ${(m["fw-dashboard"] / m.fw).toFixed(3)} (cost ` +
        `${((1 - m["fw-dashboard"] / m.fw) * 100).toFixed(1)}%)  fw+empty middleware ` +
        `${m["fw-middleware"].toFixed(0)}\n    per round (fw+dashboard/fw): ${perRound}`,
    );
    continue;
  }
  if (kinds.includes("fw-traced")) {
    const ratios = runs.fw.map((fw, i) => (runs["fw-traced"][i] / fw).toFixed(2)).join(" ");
    tracedResults[s.name] = { medians, ratios };
    const cost = 1 - medians["fw-traced"] / medians.fw;
    console.log(
      `${s.name}: fw ${medians.fw.toFixed(0)}  fw traced ${medians["fw-traced"].toFixed(0)}  ` +
        `traced/fw ${(medians["fw-traced"] / medians.fw).toFixed(2)} (tracing costs ` +
        `${(cost * 100).toFixed(1)}% of throughput; bound 15%)\n    per round: traced/fw ${ratios}`,
    );
    continue;
  }
  if (s.kinds !== undefined) {
    policyResults[s.name] = medians;
    const m = medians;
    const ratio = m["fw-policies"] / m.fw;
    console.log(
      `${s.name}: fw ${m.fw.toFixed(0)}  fw+policies ${m["fw-policies"].toFixed(0)}  ` +
        `hono+policies ${m["hono-policies"].toFixed(0)}  fw+policies/fw ${ratio.toFixed(2)} ` +
        `(policies cost ${((1 - ratio) * 100).toFixed(1)}% of throughput)  ` +
        `fw+policies/hono+policies ${(m["fw-policies"] / m["hono-policies"]).toFixed(2)}\n` +
        `    Deno.serve alone, bare ${m.bare.toFixed(0)} vs bare + the CORS header ` +
        `${m["bare-cors"].toFixed(0)}: a second response header costs ` +
        `${((1 - m["bare-cors"] / m.bare) * 100).toFixed(1)}% there`,
    );
    continue;
  }
  results[s.name] = medians;
  const r = results[s.name];
  // Per-round ratios (each round runs the three servers back to back) show the run's noise.
  const ratios = (of: string) => runs.fw.map((fw, i) => (fw / runs[of][i]).toFixed(2)).join(" ");
  console.log(
    `${s.name}: bare ${r.bare.toFixed(0)}  hono ${r.hono.toFixed(0)}  fw ${r.fw.toFixed(0)}  ` +
      `fw/bare ${(r.fw / r.bare).toFixed(2)}  fw/hono ${(r.fw / r.hono).toFixed(2)}\n` +
      `    per round: fw/bare ${ratios("bare")}; fw/hono ${ratios("hono")}`,
  );
}
await Deno.remove(postScript);

console.log(
  `\nreq/s, median of ${rounds} rounds of ${duration}s, wrk -t1 -c${connections}, ${Deno.build.target}; ` +
    `load average ${loadBefore} before, ${await loadAverage()} after`,
);
if (Object.keys(results).length) {
  console.log("| scenario | bare | hono | fw | fw/bare | fw/hono |");
  console.log("| --- | ---: | ---: | ---: | ---: | ---: |");
  for (const [name, r] of Object.entries(results)) {
    console.log(
      `| ${name} | ${r.bare.toFixed(0)} | ${r.hono.toFixed(0)} | ${r.fw.toFixed(0)} | ${
        (r.fw / r.bare).toFixed(2)
      } | ${(r.fw / r.hono).toFixed(2)} |`,
    );
  }
}
if (Object.keys(tracedResults).length) {
  console.log(
    "\n| scenario | fw (untraced) | fw traced | traced/fw | tracing cost | per round | fw+sdk | sdk floor: (fw+sdk)/fw | traced/(fw+sdk) |",
  );
  console.log("| --- | ---: | ---: | ---: | ---: | --- | ---: | ---: | ---: |");
  for (const [name, { medians: m, ratios }] of Object.entries(tracedResults)) {
    const ratio = m["fw-traced"] / m.fw;
    console.log(
      `| ${name} | ${m.fw.toFixed(0)} | ${m["fw-traced"].toFixed(0)} | ${ratio.toFixed(2)} | ${
        ((1 - ratio) * 100).toFixed(1)
      }% | ${ratios} | ${m["fw+sdk"].toFixed(0)} | ${(m["fw+sdk"] / m.fw).toFixed(2)} | ${
        (m["fw-traced"] / m["fw+sdk"]).toFixed(2)
      } |`,
    );
  }
  console.log(
    "fw+sdk: untraced fw whose handler makes the same SERVER span straight through the SDK " +
      "(no fw tracing code): the most any instrumentation on this SDK can keep",
  );
}
if (Object.keys(policyResults).length) {
  console.log(
    "\n| scenario | fw | fw+policies | hono+policies | fw+policies/fw | policy cost | bare | bare+CORS header |",
  );
  console.log("| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: |");
  for (const [name, m] of Object.entries(policyResults)) {
    const ratio = m["fw-policies"] / m.fw;
    console.log(
      `| ${name} | ${m.fw.toFixed(0)} | ${m["fw-policies"].toFixed(0)} | ${
        m["hono-policies"].toFixed(0)
      } | ${ratio.toFixed(2)} | ${((1 - ratio) * 100).toFixed(1)}% | ${m.bare.toFixed(0)} | ${
        m["bare-cors"].toFixed(0)
      } |`,
    );
  }
}
if (Object.keys(dashboardResults).length) {
  console.log(
    "\n| scenario | fw | fw+dashboard | ratio | cost | per-round ratios | fw+empty middleware |",
  );
  console.log("| --- | ---: | ---: | ---: | ---: | --- | ---: |");
  for (const [name, { m, perRound }] of Object.entries(dashboardResults)) {
    const ratio = m["fw-dashboard"] / m.fw;
    console.log(
      `| ${name} | ${m.fw.toFixed(0)} | ${m["fw-dashboard"].toFixed(0)} | ${ratio.toFixed(3)} | ${
        ((1 - ratio) * 100).toFixed(1)
      }% | ${perRound} | ${m["fw-middleware"].toFixed(0)} |`,
    );
  }
}

console.log("\nVerdicts (each needs its baseline within 1.5x of its quiet figure):");
for (const [check, text] of verdicts) console.log(`  ${verdict([check], text)}`);
