/**
 * The quiet-machine figures of the benchmarks' baselines, in one place, and the check every ratio
 * verdict of `scripts/bench*.ts` goes through.
 *
 * A ratio compares fw with a baseline measured in the same run (bare `Deno.serve`, a bare `fetch`,
 * a bare broadcast loop). On a loaded machine the baseline slows down too, and not by the same
 * factor as the subject: a slow baseline flatters the ratio (a cold start of 76 ms for bare
 * `Deno.serve` instead of 22 ms turned 2.29x into 1.89x). So each benchmark prints the baseline's
 * own figure beside its ratios and compares it with the figure below; when the baseline is more
 * than {@linkcode LOADED_FACTOR} times slower than on a quiet machine, it prints no verdict and
 * says to run again.
 *
 * The figures are those of the 2-core development machine with nothing else running; a baseline
 * without one (`bench:streams`' bare fan-outs) prints its figure and
 * asks for it to be recorded, and its verdict is printed. On another
 * machine, run the benchmark when the machine is quiet and put the baseline's figure here (the
 * benchmarks print it as `baseline ... (quiet ...)`), or set `BENCH_IGNORE_LOAD=1` to print the
 * verdicts regardless (they are then marked as such).
 *
 * @module
 */

/** A baseline's figure on a quiet machine. */
export interface QuietFigure {
  /** The figure. */
  readonly value: number;
  /** Its unit, as printed. */
  readonly unit: string;
  /** `lower` for times (ms, µs), `higher` for rates (req/s, messages/s). */
  readonly better: "lower" | "higher";
  /** Where the figure comes from. */
  readonly source: string;
}

/** A baseline more than this many times slower than its quiet figure means a loaded machine. */
export const LOADED_FACTOR = 1.5;

/** The quiet figures, by benchmark and baseline. */
export const QUIET: Readonly<Record<string, QuietFigure>> = {
  // bench:startup: spawn to first 200 of a bare Deno.serve (issue 26: 22 ms quiet, 76 ms loaded)
  "startup/bare": {
    value: 22,
    unit: "ms",
    better: "lower",
    source: "issue 26, quiet 2-core machine",
  },
  // bench:http: bare Deno.serve per scenario, and fw on (b) for the rows that compare fw variants
  "http/a/bare": {
    value: 161_580,
    unit: "req/s",
    better: "higher",
    source: "README Performance",
  },
  "http/b/bare": {
    value: 130_185,
    unit: "req/s",
    better: "higher",
    source: "README Performance",
  },
  "http/c/bare": {
    value: 116_855,
    unit: "req/s",
    better: "higher",
    source: "README Performance",
  },
  "http/d/bare": {
    // the bare server answers (d)'s request by the same code as (b)'s: its 200 extra routes are a
    // set looked up only after /users, so its quiet figure is (b)'s; the README run's 149,924 was
    // (b)'s run-to-run spread, not a faster server
    value: 130_185,
    unit: "req/s",
    better: "higher",
    source: "README Performance, bare on (b) (same code path)",
  },
  "http/b/fw": {
    value: 125_985,
    unit: "req/s",
    better: "higher",
    source: "README Performance, fw on (b): the baseline of rows (e), (f) and (g)",
  },
  // bench:client: a bare fetch against the bench's server, 16 in flight
  "client/bare": {
    value: 22_720,
    unit: "req/s",
    better: "higher",
    source:
      "bench:client on 2026-11-26 06:36, nothing else running, median of 9 rounds (12,978-27,452: it warms up)",
  },
  // bench:streams: the bare broadcast loop the Event Server is compared with
  "streams/eventserver/bare": {
    value: 72_346,
    unit: "messages/s",
    better: "higher",
    source: "bench:streams on 2026-11-26 06:37, nothing else running, median of 2 rounds",
  },
  // bench:events: each transport's raw peer (CPU per message where the bench measures it, the
  // steadier figure on a shared machine; jobs/s for the Redis and PostgreSQL tables, which print
  // rates only). Keys are `events/<row>@<concurrency>`.
  "events/bare@1": {
    value: 939,
    unit: "ns CPU/msg",
    better: "lower",
    source:
      "bench:events on 2026-11-26 06:33, nothing else running, median of 3 rounds (earlier notes: 600-800)",
  },
  "events/bare@100": {
    value: 744,
    unit: "ns CPU/msg",
    better: "lower",
    source:
      "bench:events on 2026-11-26 06:33, nothing else running, median of 3 rounds (earlier notes: 600-800)",
  },
  "events/nats-raw@1": {
    value: 50_213,
    unit: "ns CPU/msg",
    better: "lower",
    source:
      "bench:events on 2026-11-26 06:34-06:40, nothing else running (load average 1.0-2.0 from the bench itself), median of 5 rounds (two runs: 50.2 and 59.6 µs; the earlier 29 µs figure came from unrecorded notes)",
  },
  "events/nats-raw@100": {
    value: 36_659,
    unit: "ns CPU/msg",
    better: "lower",
    source:
      "bench:events on 2026-11-26 06:34-06:40, nothing else running (load average 1.0-2.0 from the bench itself), median of 3 rounds (two runs: 36.7 and 42.0 µs; the earlier 29 µs figure came from unrecorded notes)",
  },
  "events/raw-redis@1": {
    value: 131_473,
    unit: "jobs/s",
    better: "higher",
    source:
      "bench:events on 2026-11-26 06:34-06:40, nothing else running (load average 1.0-2.0 from the bench itself), median of 3 rounds",
  },
  "events/raw-redis@50": {
    value: 160_577,
    unit: "jobs/s",
    better: "higher",
    source:
      "bench:events on 2026-11-26 06:34-06:40, nothing else running (load average 1.0-2.0 from the bench itself), median of 3 rounds",
  },
  "events/raw-sql@1": {
    value: 10_104,
    unit: "jobs/s",
    better: "higher",
    source:
      "bench:events on 2026-11-26 06:34-06:40, nothing else running (load average 1.0-2.0 from the bench itself), median of 2 rounds",
  },
  "events/raw-sql@50": {
    value: 10_273,
    unit: "jobs/s",
    better: "higher",
    source:
      "bench:events on 2026-11-26 06:34-06:40, nothing else running (load average 1.0-2.0 from the bench itself), median of 2 rounds",
  },
  "events/denokv-raw@1": {
    value: 1_350,
    unit: "msg/s",
    better: "higher",
    source:
      "README Deno KV (fw's denokv about 1,350 messages/s on this machine; its raw peer is at least as fast, so lenient)",
  },
  "events/denokv-raw@100": {
    value: 1_350,
    unit: "msg/s",
    better: "higher",
    source:
      "README Deno KV (fw's denokv about 1,350 messages/s on this machine; its raw peer is at least as fast, so lenient)",
  },
};

/** The outcome of {@linkcode checkBaseline}. */
export interface BaselineCheck {
  /** True when the baseline is within {@linkcode LOADED_FACTOR} of its quiet figure. */
  readonly quiet: boolean;
  /** How many times slower than quiet the baseline ran (1 = as quiet, below 1 = faster). */
  readonly slowdown: number;
  /** One line: the baseline's figure, its quiet figure and the slowdown, or why there is none. */
  readonly text: string;
}

/** True when `BENCH_IGNORE_LOAD=1`: verdicts are printed whatever the load (and marked). */
export const ignoreLoad: boolean = Deno.env.get("BENCH_IGNORE_LOAD") === "1";

/**
 * Compares a baseline's figure of this run with its quiet figure.
 *
 * @param key The key in {@linkcode QUIET}, such as `http/b/bare`.
 * @param measured The baseline's median in this run, in the figure's unit.
 * @returns Whether the machine was quiet enough, and a line to print.
 */
export function checkBaseline(key: string, measured: number): BaselineCheck {
  const q = QUIET[key];
  const figure = (x: number) => `${x.toLocaleString("en-US", { maximumFractionDigits: 1 })}`;
  if (q === undefined) {
    return {
      quiet: true,
      slowdown: NaN,
      text: `baseline ${key} ${
        figure(measured)
      } (no quiet figure recorded yet: if the machine is quiet, record this one in scripts/_quiet.ts)`,
    };
  }
  const slowdown = q.better === "lower" ? measured / q.value : q.value / measured;
  const quiet = slowdown <= LOADED_FACTOR;
  return {
    quiet,
    slowdown,
    text: `baseline ${key} ${figure(measured)} ${q.unit} (quiet ${figure(q.value)}, ${
      slowdown.toFixed(2)
    }x slower)${quiet ? "" : ": the machine is loaded, run again"}`,
  };
}

/**
 * A verdict, or the reason there is none: with any baseline over {@linkcode LOADED_FACTOR} times
 * its quiet figure, `no verdict: the machine is loaded (...), run again`.
 *
 * @param checks The checks of the baselines the verdict rests on.
 * @param text The verdict.
 * @returns The line to print.
 */
export function verdict(checks: readonly BaselineCheck[], text: string): string {
  const loaded = checks.filter((c) => !c.quiet);
  if (loaded.length === 0) return text;
  if (ignoreLoad) return `${text} [BENCH_IGNORE_LOAD: the machine was loaded]`;
  return `no verdict: the machine is loaded (${
    loaded.map((c) => c.text.replace(/: the machine is loaded, run again$/, "")).join("; ")
  }), run again${slowHostNote()}`;
}

/** The 1-minute load average when the benchmark started (this module's first import), or NaN. */
const loadAtStart: number = (() => {
  try {
    return Number(Deno.readTextFileSync("/proc/loadavg").split(" ")[0]);
  } catch {
    return NaN;
  }
})();

/**
 * When the baselines are slow on a machine that was idle when the benchmark started (1-minute
 * load average under 1, before the benchmark's own load), the host itself is slower than the one
 * the quiet figures come from (seen here: a virtual machine whose system calls and page faults
 * cost several times more), and running again will not help.
 */
function slowHostNote(): string {
  return loadAtStart < 1
    ? `; the load average was ${loadAtStart} when the benchmark started, so this host is slower than the quiet figures' machine (a verdict needs one like it; \`bench:startup\` and \`bench:http\` count instructions instead with \`--instructions\`)`
    : "";
}

/** The load average of the last 1, 5 and 15 minutes (`uptime`), or `?` off Linux. */
export async function loadAverage(): Promise<string> {
  const text = await Deno.readTextFile("/proc/loadavg").catch(() => "? ? ?");
  return text.split(" ").slice(0, 3).join(" ");
}
