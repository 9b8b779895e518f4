/**
 * HAProxy for `deno task cluster`: installs Debian's `haproxy` when it is missing, writes the
 * configuration (round-robin HTTP, readiness health checks, WebSocket/SSE tunnels, retries on a
 * connection that failed or closed without an answer) and reads the retry counters from the stats
 * socket. `haproxyConfig()` is the text that docs/running_many_instances.md shows.
 *
 * @module
 */

/** What the generated configuration needs. */
export interface HaproxyLayout {
  /** Port the balancer listens on (127.0.0.1). */
  port: number;
  /** The instances: name and port on 127.0.0.1. */
  servers: readonly { name: string; port: number }[];
  /** Unix socket for `show stat` (omitted from the printed example when undefined). */
  statsSocket?: string;
}

/**
 * The HAProxy configuration the cluster script runs.
 *
 * @param layout Ports, servers and the stats socket.
 * @returns The configuration text.
 */
export function haproxyConfig(layout: HaproxyLayout): string {
  const stats = layout.statsSocket
    ? `    stats socket ${layout.statsSocket} mode 600 level admin\n`
    : "";
  const servers = layout.servers.map((s) => `    server ${s.name} 127.0.0.1:${s.port}`).join("\n");
  return `global
    maxconn 4000
${stats}
defaults
    mode http
    timeout connect 2s
    timeout client 60s
    timeout server 30s
    timeout http-keep-alive 10s
    # a busy instance is slow, not gone: a stopping one answers 503 at once, a dead one refuses
    timeout check 5s
    # WebSocket and SSE connections are tunnels once upgraded/streaming
    timeout tunnel 1h
    # a request whose connection failed, or that got no answer at all, goes to another server
    retries 3
    option redispatch 1
    retry-on conn-failure empty-response

frontend fw
    bind 127.0.0.1:${layout.port}
    default_backend fw_instances

backend fw_instances
    balance roundrobin
    # fw's http({ health }) readiness: 503 from the start of a stop
    option httpchk GET /readyz
    http-check expect status 200
    # a stopping instance is down after 2 failed checks 1 s apart (~2 s): keep fw's
    # health.drainDelayMs above that (the cluster runs with 5 s)
    default-server check inter 1s fall 2 rise 2
${servers}
`;
}

async function run(cmd: string, args: string[]): Promise<boolean> {
  try {
    const out = await new Deno.Command(cmd, { args, stdout: "null", stderr: "piped" }).output();
    return out.success;
  } catch {
    return false;
  }
}

/**
 * Makes sure `haproxy` is on the PATH, installing Debian's package with apt-get when it is not.
 *
 * @throws {Error} When it is missing and cannot be installed.
 */
export async function ensureHaproxy(): Promise<void> {
  if (await run("haproxy", ["-v"])) return;
  console.error("haproxy not found: installing it with apt-get");
  const root = Deno.uid?.() === 0;
  const apt = (args: string[]) => root ? run("apt-get", args) : run("sudo", ["apt-get", ...args]);
  await apt(["update", "-qq"]);
  await apt(["install", "-y", "-qq", "haproxy"]);
  if (!(await run("haproxy", ["-v"]))) {
    throw new Error("haproxy is missing and apt-get could not install it: install it and rerun");
  }
}

/** A running `haproxy -db` (foreground) with its configuration in a temp directory. */
export class Haproxy {
  readonly #child: Deno.ChildProcess;
  readonly #socket: string;

  private constructor(child: Deno.ChildProcess, socket: string) {
    this.#child = child;
    this.#socket = socket;
  }

  /**
   * Writes the configuration into `dir` and starts HAProxy; checks the file first.
   *
   * @param dir A directory of the run.
   * @param layout Ports and servers.
   * @returns The running balancer.
   */
  static async start(dir: string, layout: Omit<HaproxyLayout, "statsSocket">): Promise<Haproxy> {
    const socket = `${dir}/haproxy.sock`;
    const file = `${dir}/haproxy.cfg`;
    await Deno.writeTextFile(file, haproxyConfig({ ...layout, statsSocket: socket }));
    const check = await new Deno.Command("haproxy", { args: ["-c", "-q", "-f", file] }).output();
    if (!check.success) {
      throw new Error(`haproxy rejected ${file}: ${new TextDecoder().decode(check.stderr)}`);
    }
    const log = await Deno.open(`${dir}/haproxy.log`, { create: true, write: true });
    const child = new Deno.Command("haproxy", {
      args: ["-db", "-f", file],
      stdin: "null",
      stdout: "null",
      stderr: "piped",
    }).spawn();
    child.stderr.pipeTo(log.writable).catch(() => {});
    for (let i = 0; i < 100; i++) {
      if (await Deno.stat(socket).then(() => true, () => false)) return new Haproxy(child, socket);
      await new Promise((r) => setTimeout(r, 50));
    }
    child.kill("SIGKILL");
    await child.status;
    throw new Error(`haproxy did not start: see ${dir}/haproxy.log`);
  }

  /**
   * Backend counters from `show stat`: retries (`wretr`), redispatches (`wredis`), connection
   * and response errors (`econ`, `eresp`), and 5xx answered by HAProxy itself.
   *
   * @returns The backend's counters.
   */
  async stats(): Promise<Record<string, number>> {
    const { names, rows } = await this.#showStat();
    const backend = rows.find((r) => r[0] === "fw_instances" && r[1] === "BACKEND");
    const out: Record<string, number> = {};
    for (const key of ["wretr", "wredis", "econ", "eresp", "hrsp_5xx", "stot"]) {
      out[key] = Number(backend?.[names.indexOf(key)] ?? 0);
    }
    return out;
  }

  /**
   * What HAProxy thinks of each server: `UP`, `DOWN`, `UP 1/2` (going down), ...
   *
   * @returns Status by server name.
   */
  async servers(): Promise<Record<string, string>> {
    const { names, rows } = await this.#showStat();
    const status = names.indexOf("status");
    const out: Record<string, string> = {};
    for (const r of rows) {
      if (r[0] === "fw_instances" && r[1] !== "BACKEND" && r[1] !== "FRONTEND") {
        out[r[1]] = r[status];
      }
    }
    return out;
  }

  async #showStat(): Promise<{ names: string[]; rows: string[][] }> {
    const conn = await Deno.connect({ transport: "unix", path: this.#socket });
    let text = "";
    try {
      await conn.write(new TextEncoder().encode("show stat\n"));
      const buf = new Uint8Array(65536);
      for (;;) {
        const n = await conn.read(buf);
        if (n === null) break;
        text += new TextDecoder().decode(buf.subarray(0, n));
      }
    } finally {
      conn.close();
    }
    const [head, ...rows] = text.trim().split("\n");
    return { names: head.replace(/^# /, "").split(","), rows: rows.map((r) => r.split(",")) };
  }

  /** Stops HAProxy. */
  async stop(): Promise<void> {
    try {
      this.#child.kill("SIGTERM");
    } catch {
      // exited
    }
    await this.#child.status;
  }
}
