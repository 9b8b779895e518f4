/**
 * The child process of the stream benchmarks (`bench_streams.ts`, `_bench_eventserver.ts`,
 * `_bench_client.ts`): a `deno run -A` process that takes commands as lines on stdin and answers
 * with JSON lines on stdout (other stdout lines are skipped; stderr is inherited).
 *
 * @module
 */

/** Options of {@linkcode Child}. */
export interface ChildOptions {
  /**
   * Raise the soft open-file limit to the hard limit before starting Deno (through `sh -c
   * ulimit`), for processes that hold thousands of connections. Default `true`.
   */
  readonly raiseFileLimit?: boolean;
  /** Name used in the error when the process exits early. Default `"child"`. */
  readonly name?: string;
}

/** A child process that speaks JSON lines. */
export class Child {
  readonly #process: Deno.ChildProcess;
  readonly #writer: WritableStreamDefaultWriter<Uint8Array>;
  readonly #lines: ReadableStreamDefaultReader<string>;
  readonly #name: string;
  #buffer = "";

  /**
   * Starts `deno run -A ...args`.
   *
   * @param args Deno flags, script path and script arguments.
   * @param options See {@linkcode ChildOptions}.
   */
  constructor(args: string[], options: ChildOptions = {}) {
    this.#name = options.name ?? "child";
    const deno = [Deno.execPath(), "run", "-A", ...args];
    const [command, ...commandArgs] = options.raiseFileLimit === false
      ? deno
      : ["sh", "-c", 'ulimit -n "$(ulimit -Hn)" 2>/dev/null; exec "$0" "$@"', ...deno];
    this.#process = new Deno.Command(command, {
      args: commandArgs,
      stdin: "piped",
      stdout: "piped",
      stderr: "inherit",
    }).spawn();
    this.#writer = this.#process.stdin.getWriter();
    this.#lines = this.#process.stdout.pipeThrough(new TextDecoderStream()).getReader();
  }

  /**
   * Reads the next JSON line.
   *
   * @returns The parsed line.
   * @throws {Error} When the process exits first.
   */
  async read<T = Record<string, number>>(): Promise<T> {
    for (;;) {
      const nl = this.#buffer.indexOf("\n");
      if (nl >= 0) {
        const line = this.#buffer.slice(0, nl);
        this.#buffer = this.#buffer.slice(nl + 1);
        if (line.startsWith("{")) return JSON.parse(line);
        continue;
      }
      const { value, done } = await this.#lines.read();
      if (done) throw new Error(`${this.#name} process exited`);
      this.#buffer += value;
    }
  }

  /**
   * Sends one command line and reads the answer.
   *
   * @param command The command.
   * @returns The parsed answer.
   */
  async ask<T = Record<string, number>>(command: string): Promise<T> {
    await this.#writer.write(new TextEncoder().encode(command + "\n"));
    return await this.read<T>();
  }

  /** Stops the process (SIGTERM) and releases its pipes. */
  async close(): Promise<void> {
    try {
      this.#process.kill("SIGTERM");
    } catch {
      // already gone
    }
    await this.#process.status;
    await this.#writer.close().catch(() => {});
    await this.#lines.cancel().catch(() => {});
  }
}
