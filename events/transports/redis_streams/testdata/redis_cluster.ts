/**
 * A throw-away Redis Cluster for tests: `redis-server --cluster-enabled yes` nodes on free ports
 * below the ephemeral range (client and cluster-bus ports both, so a killed node gets its port
 * back when it starts again), each in its own directory under one temp dir,
 * joined with `redis-cli --cluster create ... --cluster-yes`. Never the shared Redis on 6379.
 *
 * Three masters by default, each with `replicas` replicas (0 or 1): the conformance suites use 3
 * masters alone; the failover tests add a replica per master, kill a master with SIGKILL and wait
 * for its replica to take over. `cluster-node-timeout` is 1 s so that a failover takes seconds.
 *
 * @module
 */

import { stablePort } from "../../cloud/testdata/nats_cluster.ts";

/** One node of the cluster. */
export interface ClusterNode {
  readonly port: number;
  readonly busPort: number;
  readonly dir: string;
  child: Deno.ChildProcess | undefined;
}

/**
 * A free port below the ephemeral range ({@linkcode stablePort}), not yet given to this cluster: a
 * killed node that starts again must get its port back.
 */
function freePort(taken: Set<number>): number {
  for (;;) {
    const port = stablePort();
    if (!taken.has(port)) {
      taken.add(port);
      return port;
    }
  }
}

/** Runs `redis-cli` and returns its output (throws with its output on a failure). */
async function cli(args: string[], password?: string): Promise<string> {
  const out = await new Deno.Command("redis-cli", {
    args: password === undefined ? args : ["-a", password, "--no-auth-warning", ...args],
    stdin: "null",
    stdout: "piped",
    stderr: "piped",
  }).output();
  const text = new TextDecoder().decode(out.stdout) + new TextDecoder().decode(out.stderr);
  if (!out.success) throw new Error(`redis-cli ${args.join(" ")} failed: ${text}`);
  return text;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** A private Redis Cluster on loopback. */
export class RedisCluster {
  readonly nodes: ClusterNode[];
  readonly dir: string;
  /** The password every node requires (`requirepass`, `masterauth`), if any. */
  readonly password: string | undefined;

  private constructor(nodes: ClusterNode[], dir: string, password: string | undefined) {
    this.nodes = nodes;
    this.dir = dir;
    this.password = password;
  }

  /** The node URLs, to give fw as `url: [...]` (with the password, if any). */
  get urls(): string[] {
    const auth = this.password === undefined ? "" : `:${encodeURIComponent(this.password)}@`;
    return this.nodes.map((n) => `redis://${auth}127.0.0.1:${n.port}`);
  }

  /**
   * Starts `masters` masters with `replicas` replicas each and waits until the cluster is `ok`
   * on every node and every replica is in sync.
   */
  static async start(
    options: { masters?: number; replicas?: number; timeoutMs?: number; password?: string } = {},
  ): Promise<RedisCluster> {
    // A free port can be taken by another process before redis-server binds it: try again on
    // fresh ports.
    for (let attempt = 1;; attempt++) {
      try {
        return await RedisCluster.#start(options);
      } catch (err) {
        if (attempt === 3) throw err;
      }
    }
  }

  static async #start(
    options: { masters?: number; replicas?: number; timeoutMs?: number; password?: string },
  ): Promise<RedisCluster> {
    const masters = options.masters ?? 3, replicas = options.replicas ?? 0;
    const dir = await Deno.makeTempDir({ prefix: "fw-redis-cluster-" });
    const taken = new Set<number>();
    const nodes: ClusterNode[] = [];
    for (let i = 0; i < masters * (1 + replicas); i++) {
      const nodeDir = `${dir}/node-${i}`;
      await Deno.mkdir(nodeDir);
      nodes.push({
        port: freePort(taken),
        busPort: freePort(taken),
        dir: nodeDir,
        child: undefined,
      });
    }
    const cluster = new RedisCluster(nodes, dir, options.password);
    try {
      await Promise.all(nodes.map((n) => cluster.#spawn(n)));
      await cli([
        "--cluster",
        "create",
        ...nodes.map((n) => `127.0.0.1:${n.port}`),
        "--cluster-replicas",
        String(replicas),
        "--cluster-yes",
      ], options.password);
      await cluster.waitHealthy(options.timeoutMs ?? 30_000);
    } catch (err) {
      await cluster.destroy();
      throw err;
    }
    return cluster;
  }

  async #spawn(node: ClusterNode): Promise<void> {
    node.child = new Deno.Command("redis-server", {
      args: [
        "--port",
        String(node.port),
        "--cluster-port",
        String(node.busPort),
        "--bind",
        "127.0.0.1",
        "--dir",
        node.dir,
        "--cluster-enabled",
        "yes",
        "--cluster-config-file",
        "nodes.conf",
        "--cluster-node-timeout",
        "1000",
        "--cluster-replica-validity-factor",
        "0",
        "--appendonly",
        "no",
        "--save",
        "",
        ...(this.password === undefined
          ? []
          : ["--requirepass", this.password, "--masterauth", this.password]),
      ], // deno-fmt-ignore
      stdin: "null",
      stdout: "null",
      stderr: "null",
    }).spawn();
    let exited = false;
    node.child.status.then(() => exited = true);
    const end = Date.now() + 20_000;
    for (;;) {
      if (exited) throw new Error(`redis-server on port ${node.port} exited (port taken?)`);
      try {
        if ((await cli(["-p", String(node.port), "ping"], this.password)).startsWith("PONG")) {
          return;
        }
      } catch {
        // not listening yet
      }
      if (Date.now() > end) throw new Error(`redis-server on port ${node.port} did not start`);
      await sleep(50);
    }
  }

  /** The `CLUSTER NODES` lines seen by a live node: id, address port, flags, slots. */
  async topology(): Promise<
    { id: string; port: number; flags: string; master: string; slots: string }[]
  > {
    for (const n of this.nodes) {
      if (!n.child) continue;
      try {
        const text = await cli(["-p", String(n.port), "cluster", "nodes"], this.password);
        return text.trim().split("\n").map((line) => {
          const f = line.split(" ");
          return {
            id: f[0],
            port: Number(f[1].split("@")[0].split(":").pop()),
            flags: f[2],
            master: f[3],
            slots: f.slice(8).join(" "),
          };
        });
      } catch {
        // try the next node
      }
    }
    throw new Error("No node of the Redis Cluster answers");
  }

  /**
   * Waits until every live node reports `cluster_state:ok`, sees every other live node as
   * connected and every live replica has its master link up.
   */
  async waitHealthy(timeoutMs = 30_000): Promise<void> {
    const end = Date.now() + timeoutMs;
    let last = "";
    for (;;) {
      try {
        let ok = true;
        for (const n of this.nodes) {
          if (!n.child) continue;
          const info = await cli(["-p", String(n.port), "cluster", "info"], this.password);
          if (!info.includes("cluster_state:ok")) {
            ok = false;
            last = `node ${n.port}: ${info.split("\n")[0]}`;
            break;
          }
          const repl = await cli(["-p", String(n.port), "info", "replication"], this.password);
          if (repl.includes("role:slave") && !repl.includes("master_link_status:up")) {
            ok = false;
            last = `replica ${n.port}: master link down`;
            break;
          }
        }
        if (ok) return;
      } catch (err) {
        last = String(err);
      }
      if (Date.now() > end) throw new Error(`The Redis Cluster did not become healthy: ${last}`);
      await sleep(100);
    }
  }

  /** The port of the master that serves `slot`. */
  async masterOf(slot: number): Promise<number> {
    for (const n of await this.topology()) {
      if (!n.flags.includes("master") || n.flags.includes("fail")) continue;
      for (const range of n.slots.split(" ")) {
        const [from, to = from] = range.split("-").map(Number);
        if (slot >= from && slot <= to) return n.port;
      }
    }
    throw new Error(`No live master serves slot ${slot}`);
  }

  /** Kills a node with SIGKILL (no clean shutdown, nothing flushed). */
  async kill(port: number): Promise<void> {
    const node = this.nodes.find((n) => n.port === port);
    const child = node?.child;
    if (!node || !child) throw new Error(`No running node on port ${port}`);
    node.child = undefined;
    try {
      child.kill("SIGKILL");
    } catch { /* exited */ }
    await child.status;
  }

  /**
   * Waits until a replica has taken over the slots of the killed master on `port` (it is
   * flagged failed and the cluster is `ok` again on the live nodes).
   */
  async waitFailover(port: number, timeoutMs = 30_000): Promise<void> {
    const end = Date.now() + timeoutMs;
    for (;;) {
      try {
        const nodes = await this.topology();
        const dead = nodes.find((n) => n.port === port);
        if (
          dead && dead.flags.includes("fail") && !dead.flags.includes("fail?") && dead.slots === ""
        ) {
          await this.waitHealthy(Math.max(1, end - Date.now()));
          return;
        }
      } catch {
        // a node is busy electing
      }
      if (Date.now() > end) throw new Error(`No replica took over from master ${port}`);
      await sleep(100);
    }
  }

  /**
   * Starts a killed node again on its port and directory (its `nodes.conf` makes it rejoin: a
   * master that lost its slots comes back as a replica of the one that took over) and waits
   * until the cluster is healthy.
   */
  async restart(port: number): Promise<void> {
    const node = this.nodes.find((n) => n.port === port);
    if (!node || node.child) throw new Error(`No stopped node on port ${port}`);
    await this.#spawn(node);
    await this.waitHealthy();
  }

  /** Stops every node and removes the temp dir. */
  async destroy(): Promise<void> {
    await Promise.all(this.nodes.map(async (n) => {
      const child = n.child;
      n.child = undefined;
      if (!child) return;
      try {
        child.kill("SIGKILL");
      } catch { /* exited */ }
      await child.status;
    }));
    await Deno.remove(this.dir, { recursive: true }).catch(() => {});
  }
}
