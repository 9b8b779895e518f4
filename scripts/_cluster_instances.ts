/**
 * The instances of `deno task cluster`: each a `deno run` of `examples/cluster/main.ts` on a fixed
 * port (HAProxy's configuration names it), with its output appended to a log file in the run's
 * directory. Started, SIGTERMed (then waited for), SIGKILLed, and asked for its RSS.
 *
 * @module
 */

const main = new URL("../examples/cluster/main.ts", import.meta.url).pathname;
const config = new URL("../deno.json", import.meta.url).pathname;

/** A free TCP port on 127.0.0.1 (closed again at once). */
export function freePort(): number {
  const listener = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  const { port } = listener.addr as Deno.NetAddr;
  listener.close();
  return port;
}

/** Resolves after `ms`. */
export function pause(ms: number): Promise<void> {
  return new Promise((r) => setTimeout(r, ms));
}

/** One slot of the cluster: a name, a port and the process currently serving it. */
export class Instance {
  #child: Deno.ChildProcess | undefined;
  #exited: Promise<Deno.CommandStatus> | undefined;
  /** How many processes this slot has run. */
  starts = 0;
  /** Exit codes of the processes that ended, in order (137 style: `signal:SIGKILL`). */
  readonly exits: string[] = [];

  constructor(
    readonly name: string,
    readonly port: number,
    readonly env: Record<string, string>,
    readonly logFile: string,
  ) {}

  /** The current process id. */
  get pid(): number | undefined {
    return this.#child?.pid;
  }

  /** Starts a process and waits until its readiness route answers 200. */
  async start(): Promise<void> {
    const open = () => Deno.open(this.logFile, { append: true, create: true, write: true });
    const [out, err] = [await open(), await open()];
    const child = new Deno.Command(Deno.execPath(), {
      args: ["run", "-A", "--config", config, main],
      env: {
        ...this.env,
        PORT: String(this.port),
        CLUSTER_INSTANCE: `${this.name}#${this.starts + 1}`,
      },
      stdin: "null",
      stdout: "piped",
      stderr: "piped",
    }).spawn();
    this.starts++;
    this.#child = child;
    const streams = Promise.all([
      child.stdout.pipeTo(out.writable),
      child.stderr.pipeTo(err.writable),
    ]);
    this.#exited = child.status.then(async (status) => {
      await streams.catch(() => {});
      this.exits.push(status.signal ? `signal:${status.signal}` : `code:${status.code}`);
      return status;
    });
    const deadline = Date.now() + 60_000;
    for (;;) {
      const exited = await Promise.race([
        this.#exited.then(() => true),
        pause(0).then(() => false),
      ]);
      if (exited) throw new Error(`${this.name} exited while starting: see ${this.logFile}`);
      try {
        const res = await fetch(`http://127.0.0.1:${this.port}/readyz`);
        await res.body?.cancel();
        if (res.status === 200) return;
      } catch {
        // not listening yet
      }
      if (Date.now() > deadline) throw new Error(`${this.name} not ready after 60 s`);
      await pause(100);
    }
  }

  /** Sends `signal` and waits for the process to exit; returns its exit description. */
  async stop(signal: "SIGTERM" | "SIGKILL"): Promise<string> {
    const child = this.#child;
    if (!child) return "not running";
    try {
      child.kill(signal);
    } catch {
      // already exited
    }
    await this.#exited;
    this.#child = undefined;
    return this.exits.at(-1)!;
  }

  /** Resident set size of the current process in MiB (from /proc), or NaN. */
  async rssMiB(): Promise<number> {
    if (!this.pid) return NaN;
    try {
      const status = await Deno.readTextFile(`/proc/${this.pid}/status`);
      const kb = Number(/VmRSS:\s+(\d+)/.exec(status)?.[1]);
      return Math.round(kb / 1024);
    } catch {
      return NaN;
    }
  }
}
