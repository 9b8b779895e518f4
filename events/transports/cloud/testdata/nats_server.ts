/**
 * Test support: whether a NATS server answers, and a private `nats-server -js` on a free port with
 * file storage in a temporary directory, which a test can stop and start again (chaos tests).
 *
 * @module
 */

/** The shared NATS server of the development and CI machines. */
export const NATS_ADDRESS = "127.0.0.1:4222";

/** Whether a NATS server answers at `host:port` (it greets with `INFO`). */
export async function natsReachable(address: string = NATS_ADDRESS): Promise<boolean> {
  const [hostname, port] = address.split(":");
  let conn: Deno.TcpConn | undefined;
  try {
    conn = await Deno.connect({ hostname, port: Number(port) });
    const buf = new Uint8Array(4);
    const timer = setTimeout(() => conn?.close(), 2000);
    const n = await conn.read(buf).catch(() => null);
    clearTimeout(timer);
    return n === 4 && new TextDecoder().decode(buf) === "INFO";
  } catch {
    return false;
  } finally {
    try {
      conn?.close();
    } catch { /* closed by the timer */ }
  }
}

/** A free TCP port on 127.0.0.1. */
export function freePort(): number {
  const l = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  const port = (l.addr as Deno.NetAddr).port;
  l.close();
  return port;
}

/** A `nats-server -js` of the test's own, on a free port, storing in a temporary directory. */
export class PrivateNatsServer {
  readonly port: number = freePort();
  readonly address: string = `127.0.0.1:${this.port}`;
  #dir: string | undefined;
  #child: Deno.ChildProcess | undefined;

  /** Starts the server and waits until it answers. */
  async start(): Promise<void> {
    this.#dir ??= await Deno.makeTempDir({ prefix: "fw-nats-" });
    this.#child = new Deno.Command("nats-server", {
      args: ["-js", "-a", "127.0.0.1", "-p", String(this.port), "-sd", this.#dir],
      stdout: "null",
      stderr: "null",
    }).spawn();
    const end = Date.now() + 10_000;
    while (!(await natsReachable(this.address))) {
      if (Date.now() > end) throw new Error(`nats-server did not answer on ${this.address}`);
      await new Promise((r) => setTimeout(r, 50));
    }
  }

  /** Stops the server (SIGKILL: no clean shutdown) and waits for it to exit. */
  async kill(): Promise<void> {
    const child = this.#child;
    this.#child = undefined;
    if (!child) return;
    try {
      child.kill("SIGKILL");
    } catch { /* already gone */ }
    await child.status;
  }

  /** Stops the server and removes its storage. */
  async close(): Promise<void> {
    await this.kill();
    if (this.#dir) await Deno.remove(this.#dir, { recursive: true }).catch(() => {});
    this.#dir = undefined;
  }
}
