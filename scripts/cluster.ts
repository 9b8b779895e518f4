/**
 * `deno task cluster`: three instances of `examples/cluster` behind HAProxy, under load from this
 * process, through a rolling restart, a SIGKILL and a Redis restart; prints a table and a verdict
 * and exits 1 when anything was lost.
 *
 * Flags: `--duration=<s>` (default 180), `--instances=<n>` (3), `--subscribers=<n>` (300 `eventClient`s), `--sse=<n>` (30 `EventSource`s),
 * `--rate=<writes per s>` (10), `--drain-ms=<ms>` (5000), `--no-roll`, `--no-kill`, `--no-redis`,
 * `--database-url=<url>` (default `CLUSTER_DATABASE_URL`, else the local `postgres://root@127.0.0.1:5432/test`),
 * `--print-haproxy` (print the HAProxy configuration for three instances and exit).
 *
 * @module
 */

import { haproxyConfig } from "./_cluster_haproxy.ts";
import { runCluster } from "./_cluster_run.ts";

function flag(name: string, fallback: number): number {
  const arg = Deno.args.find((a) => a.startsWith(`--${name}=`));
  if (arg === undefined) return fallback;
  const value = Number(arg.slice(name.length + 3));
  if (!(value > 0)) throw new TypeError(`Invalid flag "--${name}": expected a positive number`);
  return value;
}

if (Deno.args.includes("--print-haproxy")) {
  console.log(haproxyConfig({
    port: 8080,
    servers: [1, 2, 3].map((i) => ({ name: `i${i}`, port: 8000 + i })),
  }));
  Deno.exit(0);
}

const options = {
  durationMs: flag("duration", 180) * 1000,
  instances: flag("instances", 3),
  subscribers: flag("subscribers", 300),
  sseSubscribers: flag("sse", 30),
  rate: flag("rate", 10),
  drainMs: flag("drain-ms", 5000),
  roll: !Deno.args.includes("--no-roll"),
  kill: !Deno.args.includes("--no-kill"),
  redisRestart: !Deno.args.includes("--no-redis"),
  databaseUrl: Deno.args.find((a) => a.startsWith("--database-url="))?.slice(15) ??
    Deno.env.get("CLUSTER_DATABASE_URL") ?? "postgres://root@127.0.0.1:5432/test",
  log: (line: string) => console.log(line),
};
const load = new TextDecoder().decode(await Deno.readFile("/proc/loadavg")).split(" ");
console.log(`load average at start: ${load.slice(0, 3).join(" ")}`);
const report = await runCluster(options);
console.log("");
console.log(report.text);
console.log(
  "\nHAProxy retry-on: conn-failure (any method: the instance never got the request) and" +
    " empty-response (closed without an answer: GET, and POST /orders, idempotent by its" +
    " client-chosen id); a refused write is retried by the load generator with the same id.",
);
const after = new TextDecoder().decode(await Deno.readFile("/proc/loadavg")).split(" ");
console.log(`\nload average at end: ${after.slice(0, 3).join(" ")}`);
console.log(`verdict: ${report.ok ? "PASS: nothing lost" : "FAIL"}`);
Deno.exit(report.ok ? 0 : 1);
