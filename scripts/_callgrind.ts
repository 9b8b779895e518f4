/**
 * Counting instructions with valgrind's callgrind, for the benchmarks' `--instructions` modes
 * (`bench_startup.ts`, `bench_http.ts`): a figure that does not depend on how busy or how fast
 * the machine is, only on the code run (the same binary and inputs give the same count, within
 * what background threads add).
 *
 * A process runs under callgrind from its start; `zero()` sets its counters to 0 and `count()`
 * dumps them and returns the instructions executed since the start or the last `zero()`, all
 * threads together.
 *
 * @module
 */

/** A process running under callgrind. */
export interface Counted {
  /** The process (valgrind running the command). */
  readonly child: Deno.ChildProcess;
  /** Sets the process's counters to 0. */
  zero(): Promise<void>;
  /** Dumps the counters and returns the instructions counted since the start or `zero()`. */
  count(): Promise<number>;
  /** Kills the process and removes callgrind's files. */
  close(): Promise<void>;
}

/**
 * Starts `deno run -A <entry> ...args` under callgrind.
 *
 * @param entry The script's path.
 * @param args Its arguments.
 * @param options Working directory, environment, and `jit: true` for a process that runs long
 *   enough for V8's optimising compilers to rewrite code (callgrind then checks all code for
 *   changes, `--smc-check=all-non-file`, which is slower).
 * @returns The running process.
 */
export async function startCounted(
  entry: string,
  args: readonly string[],
  options: { cwd?: string; env?: Record<string, string>; jit?: boolean; stdout?: "piped" } = {},
): Promise<Counted> {
  const out = await Deno.makeTempFile({ prefix: "fw-callgrind-" });
  const child = new Deno.Command("valgrind", {
    args: [
      "--tool=callgrind",
      ...(options.jit ? ["--smc-check=all-non-file"] : []),
      `--callgrind-out-file=${out}`,
      Deno.execPath(),
      "run",
      "-A",
      entry,
      ...args,
    ],
    cwd: options.cwd,
    stdin: "null",
    stdout: options.stdout ?? "null",
    stderr: "null",
    env: options.env,
  }).spawn();
  let dumps = 0;
  const control = (flag: string) =>
    new Deno.Command("callgrind_control", {
      args: [flag, String(child.pid)],
      stdout: "null",
      stderr: "null",
    }).output();
  return {
    child,
    async zero() {
      await control("-z");
    },
    async count() {
      await control("-d");
      const file = `${out}.${++dumps}`;
      for (let i = 0; i < 600; i++) {
        const text = await Deno.readTextFile(file).catch(() => "");
        const m = /^totals:\s+(\d+)/m.exec(text);
        if (m) return Number(m[1]);
        await new Promise((r) => setTimeout(r, 100));
      }
      throw new Error(`callgrind wrote no count to ${file}`);
    },
    async close() {
      try {
        child.kill("SIGKILL");
      } catch { /* exited already */ }
      await child.status;
      for (let i = 0; i <= dumps; i++) {
        await Deno.remove(i === 0 ? out : `${out}.${i}`).catch(() => {});
      }
    },
  };
}
