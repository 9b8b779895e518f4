/**
 * A throw-away `redis-server` for the chaos tests: its own free port and temp directory, append-only
 * file on (so a restart keeps the data), never the shared Redis on 6379.
 *
 * @module
 */

/** A private Redis server that a test can stop and start again on the same port and data. */
export class RedisServer {
  readonly port: number;
  readonly dir: string;
  #child: Deno.ChildProcess | undefined;

  private constructor(port: number, dir: string) {
    this.port = port;
    this.dir = dir;
  }

  /** The URL of this server. */
  get url(): string {
    return `redis://127.0.0.1:${this.port}`;
  }

  /** Starts a server on a free port in a new temp directory. */
  static async start(): Promise<RedisServer> {
    const listener = Deno.listen({ hostname: "127.0.0.1", port: 0 });
    const { port } = listener.addr as Deno.NetAddr;
    listener.close();
    const server = new RedisServer(port, await Deno.makeTempDir({ prefix: "fw-redis-chaos-" }));
    await server.up();
    return server;
  }

  /**
   * Starts the process and waits until it answers PING (and has loaded its data).
   *
   * @param timeoutMs Longest wait (a loaded machine replays the append-only file slowly).
   */
  async up(timeoutMs = 10_000): Promise<void> {
    this.#child = new Deno.Command("redis-server", {
      args: [
        "--port",
        String(this.port),
        "--bind",
        "127.0.0.1",
        "--dir",
        this.dir,
        "--appendonly",
        "yes",
        "--appendfsync",
        "always",
        "--save",
        "",
      ], // deno-fmt-ignore
      stdin: "null",
      stdout: "null",
      stderr: "null",
    }).spawn();
    const end = Date.now() + timeoutMs;
    for (;;) {
      try {
        const conn = await Deno.connect({ hostname: "127.0.0.1", port: this.port });
        try {
          await conn.write(new TextEncoder().encode("PING\r\n"));
          const buf = new Uint8Array(64);
          const n = await conn.read(buf);
          if (new TextDecoder().decode(buf.subarray(0, n ?? 0)).startsWith("+PONG")) return;
        } finally {
          conn.close();
        }
      } catch {
        // not listening yet
      }
      if (Date.now() > end) throw new Error(`redis-server on port ${this.port} did not start`);
      await new Promise((r) => setTimeout(r, 50));
    }
  }

  /** Stops the process (SIGTERM: Redis flushes its append-only file) and waits for it. */
  async down(): Promise<void> {
    const child = this.#child;
    this.#child = undefined;
    if (!child) return;
    try {
      child.kill("SIGTERM");
    } catch { /* exited */ }
    await child.status;
  }

  /** Stops the server and removes its directory. */
  async destroy(): Promise<void> {
    await this.down();
    await Deno.remove(this.dir, { recursive: true }).catch(() => {});
  }
}
