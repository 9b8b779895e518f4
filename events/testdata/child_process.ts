/**
 * Test helper: a `deno run -A` child process whose JSON stdout lines (those starting with `{`) are
 * collected as they arrive, and whose stderr is kept for failure messages. Used by the chaos, kill
 * and shutdown tests.
 *
 * @module
 */

/** A `deno run -A` child process with its JSON output lines. */
export class JsonLinesProcess<L> {
  /** The JSON lines printed so far, parsed. */
  readonly lines: L[] = [];
  /** The process. */
  readonly child: Deno.ChildProcess;
  readonly #reading: Promise<void>;
  #stderr = "";

  /**
   * Starts `deno run -A ...args`.
   *
   * @param args Deno flags, script and its arguments.
   */
  constructor(args: string[]) {
    this.child = new Deno.Command(Deno.execPath(), {
      args: ["run", "-A", ...args],
      stdin: "null",
      stdout: "piped",
      stderr: "piped",
    }).spawn();
    this.#reading = Promise.all([this.#read(), this.#readErrors()]).then(() => {});
  }

  /** What the process wrote to stderr so far. */
  get stderr(): string {
    return this.#stderr;
  }

  /** Sends `signal` unless the process has already exited. */
  signal(signal: Deno.Signal): void {
    try {
      this.child.kill(signal);
    } catch {
      // already exited
    }
  }

  /**
   * Waits for the process to exit and its output to be read.
   *
   * @returns The exit code and everything written to stderr.
   */
  async exit(): Promise<{ code: number; stderr: string }> {
    const status = await this.child.status;
    await this.#reading;
    return { code: status.code, stderr: this.#stderr };
  }

  /** Kills the process (SIGKILL) and waits until its output is read. */
  async kill(): Promise<void> {
    this.signal("SIGKILL");
    await this.exit();
  }

  /**
   * Waits for a line matching `match`.
   *
   * @param match The test.
   * @param ms How long to wait.
   * @param what What is awaited, for the failure message.
   * @returns The first matching line.
   * @throws {Error} After `ms`, with the process's stderr.
   */
  async next(match: (l: L) => boolean, ms: number, what: string): Promise<L> {
    const end = Date.now() + ms;
    for (;;) {
      const found = this.lines.find(match);
      if (found) return found;
      if (Date.now() > end) {
        throw new Error(`Timed out after ${ms} ms waiting for ${what}; stderr: ${this.stderr}`);
      }
      await new Promise((r) => setTimeout(r, 10));
    }
  }

  async #read(): Promise<void> {
    let buffered = "";
    for await (const chunk of this.child.stdout.pipeThrough(new TextDecoderStream())) {
      buffered += chunk;
      let nl: number;
      while ((nl = buffered.indexOf("\n")) >= 0) {
        const line = buffered.slice(0, nl).trim();
        buffered = buffered.slice(nl + 1);
        if (line.startsWith("{")) this.lines.push(JSON.parse(line));
      }
    }
  }

  async #readErrors(): Promise<void> {
    for await (const chunk of this.child.stderr.pipeThrough(new TextDecoderStream())) {
      this.#stderr += chunk;
    }
  }
}
