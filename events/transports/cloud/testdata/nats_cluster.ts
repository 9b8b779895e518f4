/**
 * Test support: a three-node NATS JetStream cluster of the test's own. Each node is a
 * `nats-server -js --cluster ... --routes ...` on free ports below the ephemeral range (client,
 * route and monitoring; see {@linkcode stablePort}), logging to a file, with its own store
 * directory in one temporary directory, a shared cluster name and its own server name. `start()` returns once the cluster has elected a JetStream meta leader; a node can be killed
 * (SIGKILL) and started again with its storage; `close()` stops every node and removes the files.
 *
 * @module
 */

import { natsReachable } from "./nats_server.ts";

/**
 * A free TCP port on 127.0.0.1 below the system's ephemeral range. A node that is killed and
 * started again must get its port back; a port from the ephemeral range may meanwhile have become
 * the local end of some other process's outgoing connection.
 */
export function stablePort(): number {
  let low = 32768;
  try {
    low = Number(Deno.readTextFileSync("/proc/sys/net/ipv4/ip_local_port_range").split(/\s+/)[0]);
  } catch { /* not Linux: the usual start of the range */ }
  const from = 10_000, to = Math.max(from + 1000, low);
  for (let i = 0; i < 100; i++) {
    const port = from + Math.floor(Math.random() * (to - from));
    try {
      Deno.listen({ hostname: "127.0.0.1", port }).close();
      return port;
    } catch { /* taken: try another */ }
  }
  throw new Error(`No free port between ${from} and ${to} on 127.0.0.1`);
}

/** One node of a {@linkcode NatsCluster}. */
export interface NatsNode {
  /** Its server name (`n1`, `n2`, `n3`). */
  readonly name: string;
  /** Client port. */
  readonly port: number;
  /** `127.0.0.1:<port>`. */
  readonly address: string;
  /** Cluster (route) port. */
  readonly routePort: number;
  /** HTTP monitoring port (`/jsz`, `/varz`). */
  readonly monitorPort: number;
}

/** What `/jsz` reports about the JetStream meta group. */
interface Jsz {
  meta_cluster?: { leader?: string; cluster_size?: number };
  account_details?: {
    stream_detail?: {
      name: string;
      cluster?: {
        leader?: string;
        replicas?: { name: string; current?: boolean; offline?: boolean; lag?: number }[];
      };
      state?: { messages?: number; last_seq?: number };
      consumer_detail?: { name: string; cluster?: { leader?: string } }[];
    }[];
  }[];
}

/** A three-node NATS JetStream cluster on free ports, storing in a temporary directory. */
export class NatsCluster {
  /** The nodes, in start order. */
  readonly nodes: readonly NatsNode[];
  /** The cluster name (random, so two tests' clusters never meet). */
  readonly name: string = `fw_${crypto.randomUUID().slice(0, 8)}`;
  #dir: string | undefined;
  readonly #children = new Map<string, Deno.ChildProcess>();

  /** @param size How many nodes (default 3). */
  constructor(size = 3) {
    this.nodes = Array.from({ length: size }, (_, i) => {
      const port = stablePort();
      return {
        name: `n${i + 1}`,
        port,
        address: `127.0.0.1:${port}`,
        routePort: stablePort(),
        monitorPort: stablePort(),
      };
    });
  }

  /** Every client address, for a client's `servers` list. */
  get servers(): string[] {
    return this.nodes.map((n) => n.address);
  }

  /** The node named `name`. */
  node(name: string): NatsNode {
    const n = this.nodes.find((x) => x.name === name);
    if (!n) throw new Error(`No node "${name}" in the NATS cluster`);
    return n;
  }

  /** The nodes running now. */
  get running(): NatsNode[] {
    return this.nodes.filter((n) => this.#children.has(n.name));
  }

  /** Starts every node and waits until the cluster has a JetStream meta leader. */
  async start(): Promise<void> {
    this.#dir ??= await Deno.makeTempDir({ prefix: "fw-nats-cluster-" });
    for (const n of this.nodes) this.#spawn(n);
    for (const n of this.nodes) await this.#reachable(n);
    await this.waitForMetaLeader();
  }

  #spawn(n: NatsNode): void {
    const routes = this.nodes.filter((x) => x !== n)
      .map((x) => `nats://127.0.0.1:${x.routePort}`).join(",");
    const child = new Deno.Command("nats-server", {
      args: [
        "-js",
        "-a",
        "127.0.0.1",
        "-p",
        String(n.port),
        "-m",
        String(n.monitorPort),
        "-sd",
        `${this.#dir}/${n.name}`,
        "-n",
        n.name,
        "--cluster_name",
        this.name,
        "--cluster",
        `nats://127.0.0.1:${n.routePort}`,
        "--routes",
        routes,
        "-l",
        `${this.#dir}/${n.name}.log`,
      ],
      stdin: "null",
      stdout: "null",
      stderr: "null",
    }).spawn();
    this.#children.set(n.name, child);
    this.#exits.delete(n.name);
    child.status.then((s) => {
      if (this.#children.get(n.name) === child) this.#exits.set(n.name, s.code);
    });
  }

  readonly #exits = new Map<string, number>();

  /** Waits until the node answers; else fails with its exit code and the end of its log. */
  async #reachable(n: NatsNode, timeoutMs = 30_000): Promise<void> {
    const end = Date.now() + timeoutMs;
    while (!(await natsReachable(n.address))) {
      const code = this.#exits.get(n.name);
      if (code !== undefined || Date.now() > end) {
        const log = await Deno.readTextFile(`${this.#dir}/${n.name}.log`).catch(() => "");
        throw new Error(
          `nats-server ${n.name} did not answer on ${n.address} ${
            code === undefined ? `in ${timeoutMs} ms` : `(it exited with code ${code})`
          }; the end of its log:\n${log.slice(-2000)}`,
        );
      }
      await new Promise((r) => setTimeout(r, 50));
    }
  }

  async #jsz(n: NatsNode, query = ""): Promise<Jsz | undefined> {
    try {
      const res = await fetch(`http://127.0.0.1:${n.monitorPort}/jsz${query}`, {
        signal: AbortSignal.timeout(2000),
      });
      return res.ok ? await res.json() as Jsz : (await res.body?.cancel(), undefined);
    } catch {
      return undefined;
    }
  }

  /** The meta leader's server name as every running node sees it, when they agree on one. */
  async metaLeader(): Promise<string | undefined> {
    const seen = await Promise.all(this.running.map((n) => this.#jsz(n)));
    const leaders = new Set(seen.map((j) => j?.meta_cluster?.leader));
    const [leader] = leaders;
    return leaders.size === 1 && leader ? leader : undefined;
  }

  /** Waits until every running node names the same, running, JetStream meta leader. */
  async waitForMetaLeader(timeoutMs = 30_000): Promise<string> {
    const end = Date.now() + timeoutMs;
    for (;;) {
      const leader = await this.metaLeader();
      if (leader && this.#children.has(leader)) return leader;
      if (Date.now() > end) {
        throw new Error(
          `The NATS cluster "${this.name}" elected no meta leader in ${timeoutMs} ms`,
        );
      }
      await new Promise((r) => setTimeout(r, 100));
    }
  }

  /** The server name of a stream's leader as every running node that holds it sees it, if agreed. */
  async streamLeader(stream: string): Promise<string | undefined> {
    const seen = await Promise.all(this.running.map((n) => this.#jsz(n, "?streams=true")));
    const leaders = new Set<string | undefined>();
    for (const j of seen) {
      for (const a of j?.account_details ?? []) {
        for (const s of a.stream_detail ?? []) {
          if (s.name === stream) leaders.add(s.cluster?.leader);
        }
      }
    }
    const [leader] = leaders;
    return leaders.size === 1 && leader && this.#children.has(leader) ? leader : undefined;
  }

  /** The server name of a consumer's leader as every running node that holds it sees it. */
  async consumerLeader(stream: string, consumer: string): Promise<string | undefined> {
    const seen = await Promise.all(
      this.running.map((n) => this.#jsz(n, "?streams=true&consumers=true")),
    );
    const leaders = new Set<string | undefined>();
    for (const j of seen) {
      for (const a of j?.account_details ?? []) {
        for (const s of a.stream_detail ?? []) {
          if (s.name !== stream) continue;
          for (const c of s.consumer_detail ?? []) {
            if (c.name === consumer) leaders.add(c.cluster?.leader);
          }
        }
      }
    }
    const [leader] = leaders;
    return leaders.size === 1 && leader && this.#children.has(leader) ? leader : undefined;
  }

  /**
   * Moves a consumer's leadership onto the node that leads its stream (asking the consumer's
   * leader to step down until the election lands there), so that killing that one node takes both
   * away. Returns that node's name.
   */
  async colocateConsumer(stream: string, consumer: string, timeoutMs = 30_000): Promise<string> {
    const end = Date.now() + timeoutMs;
    for (;;) {
      const s = await this.waitForStreamLeader(stream, timeoutMs);
      const c = await this.consumerLeader(stream, consumer);
      if (c === s) return s;
      if (Date.now() > end) {
        throw new Error(
          `Consumer "${consumer}" is led by ${c}, not by ${s}, after ${timeoutMs} ms`,
        );
      }
      if (c) {
        await natsRequest(
          this.running[0].address,
          `$JS.API.CONSUMER.LEADER.STEPDOWN.${stream}.${consumer}`,
        );
      }
      await new Promise((r) => setTimeout(r, 200));
    }
  }

  /** How many copies of the stream the cluster keeps (its leader and its replicas). */
  async streamReplicas(stream: string): Promise<number | undefined> {
    const s = await this.#leaderView(stream);
    return s ? 1 + (s.cluster?.replicas?.length ?? 0) : undefined;
  }

  async #leaderView(stream: string) {
    const leader = await this.streamLeader(stream);
    if (!leader) return undefined;
    const j = await this.#jsz(this.node(leader), "?streams=true");
    for (const a of j?.account_details ?? []) {
      for (const s of a.stream_detail ?? []) if (s.name === stream) return s;
    }
    return undefined;
  }

  /**
   * Waits until the stream's leader reports every other node as a current replica (a node that
   * was down has caught up).
   */
  async waitForCurrentReplicas(stream: string, timeoutMs = 30_000): Promise<void> {
    const end = Date.now() + timeoutMs;
    for (;;) {
      const r = (await this.#leaderView(stream))?.cluster?.replicas ?? [];
      const current = r.filter((x) => x.current && !x.offline && !x.lag).length;
      if (current === this.nodes.length - 1) return;
      if (Date.now() > end) {
        throw new Error(
          `Stream "${stream}" has ${current} current replicas, not ${
            this.nodes.length - 1
          }, after ${timeoutMs} ms`,
        );
      }
      await new Promise((r) => setTimeout(r, 100));
    }
  }

  /** How many messages the stream's leader holds (undefined while it has no leader). */
  async streamMessages(stream: string): Promise<number | undefined> {
    return (await this.#leaderView(stream))?.state?.messages;
  }

  /** Waits until a running node leads the stream, and returns its name. */
  async waitForStreamLeader(stream: string, timeoutMs = 30_000): Promise<string> {
    const end = Date.now() + timeoutMs;
    for (;;) {
      const leader = await this.streamLeader(stream);
      if (leader) return leader;
      if (Date.now() > end) {
        throw new Error(
          `Stream "${stream}" has no leader in the NATS cluster after ${timeoutMs} ms`,
        );
      }
      await new Promise((r) => setTimeout(r, 100));
    }
  }

  /** Stops a node with SIGKILL (no clean shutdown) and waits for it to exit. */
  async kill(name: string): Promise<void> {
    const child = this.#children.get(name);
    this.#children.delete(name);
    if (!child) return;
    try {
      child.kill("SIGKILL");
    } catch { /* already gone */ }
    await child.status;
  }

  /** Starts a stopped node again with its storage and waits until it answers. */
  async restart(name: string): Promise<void> {
    const n = this.node(name);
    if (this.#children.has(name)) return;
    this.#spawn(n);
    await this.#reachable(n);
  }

  /**
   * Stops every node and removes their storage without waiting (for an `unload` listener, where a
   * promise would not be awaited).
   */
  closeSync(): void {
    for (const child of this.#children.values()) {
      try {
        child.kill("SIGKILL");
      } catch { /* already gone */ }
    }
    this.#children.clear();
    if (this.#dir) {
      try {
        Deno.removeSync(this.#dir, { recursive: true });
      } catch { /* a node may still be writing; the system cleans temporary files */ }
    }
    this.#dir = undefined;
  }

  /** Stops every node and removes their storage. */
  async close(): Promise<void> {
    await Promise.all([...this.#children.keys()].map((name) => this.kill(name)));
    if (this.#dir) await Deno.remove(this.#dir, { recursive: true }).catch(() => {});
    this.#dir = undefined;
  }
}

/**
 * Sends one request with an empty body over the plain NATS protocol and returns the reply's body
 * (the tests need a few JetStream API calls the transport does not make, such as a step-down).
 */
export async function natsRequest(
  address: string,
  subject: string,
  timeoutMs = 5000,
): Promise<string> {
  const [hostname, port] = address.split(":");
  const conn = await Deno.connect({ hostname, port: Number(port) });
  const timer = setTimeout(() => conn.close(), timeoutMs);
  const inbox = `_INBOX.fw_${crypto.randomUUID().replaceAll("-", "")}`;
  try {
    await conn.write(new TextEncoder().encode(
      `CONNECT {"verbose":false,"pedantic":false}\r\nSUB ${inbox} 1\r\n` +
        `PUB ${subject} ${inbox} 0\r\n\r\nPING\r\n`,
    ));
    let text = "";
    const buf = new Uint8Array(64 * 1024);
    const decoder = new TextDecoder();
    for (;;) {
      const n = await conn.read(buf);
      if (n === null) throw new Error(`No reply to "${subject}" from ${address}`);
      text += decoder.decode(buf.subarray(0, n));
      const m = /MSG \S+ 1 (\d+)\r\n/.exec(text);
      if (m) {
        const start = m.index + m[0].length;
        const size = Number(m[1]);
        if (text.length - start >= size) return text.slice(start, start + size); // ASCII JSON
      }
    }
  } finally {
    clearTimeout(timer);
    try {
      conn.close();
    } catch { /* closed by the timer */ }
  }
}

/** Whether a `nats-server` binary is on the PATH. */
export async function hasNatsServer(): Promise<boolean> {
  return await new Deno.Command("nats-server", { args: ["--version"], stdout: "null" })
    .output().then((o) => o.success, () => false);
}
