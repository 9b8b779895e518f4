/**
 * The short version of `deno task cluster` (issue 28): two instances of `examples/cluster` behind
 * HAProxy, a rolling restart of both under a little load (writes, reads, 20 `eventClient`
 * subscribers and 5 `EventSource`s through the balancer). Nothing may be lost: every request answered, every accepted
 * order stored once, every event handled, every subscriber gets every live message after the id
 * it subscribed from, in order, and no dead letter. The full run (3 instances, 300 subscribers,
 * 3 minutes, a SIGKILL and a Redis restart too) is `deno task cluster`.
 *
 * @module
 */

import assert from "node:assert/strict";
import { runCluster } from "../scripts/_cluster_run.ts";

Deno.test({
  name: "a rolling restart behind HAProxy loses no request, order, event or live message",
  // child processes, HAProxy and WebSocket clients close asynchronously after the report
  sanitizeOps: false,
  sanitizeResources: false,
  fn: async () => {
    const progress: string[] = [];
    const report = await runCluster({
      durationMs: 20_000,
      instances: 2,
      subscribers: 20,
      sseSubscribers: 5,
      rate: 5,
      roll: true,
      kill: false,
      redisRestart: false,
      drainMs: 5_000,
      databaseUrl: Deno.env.get("CLUSTER_DATABASE_URL") ?? "postgres://root@127.0.0.1:5432/test",
      log: (line) => progress.push(line),
    });
    const failed = report.rows.filter((r) => r.ok === false).map((r) => `${r.what}: ${r.value}`);
    assert.deepEqual(failed, [], `${report.text}\n${progress.join("\n")}`);
    const value = (what: string) => report.rows.find((r) => r.what.startsWith(what))?.value;
    assert.ok(Number(value("orders accepted")) > 0);
    assert.ok(Number(value("live eventClient (WebSocket): messages received")) > 0);
    assert.ok(Number(value("live EventSource (SSE): messages received")) > 0);
    // both instances were replaced by a graceful stop (exit code 0), and HAProxy saw each go down
    assert.deepEqual(
      report.rows.filter((r) => r.what.includes("RSS")).map((r) =>
        /\((\d+): (.*)\)/.exec(r.value)?.slice(1)
      ),
      [["2", "code:0"], ["2", "code:0"]],
    );
    for (const name of ["i1", "i2"]) {
      assert.ok(
        progress.some((l) => new RegExp(`HAProxy: .*${name} DOWN`).test(l)),
        `HAProxy never marked ${name} down:\n${progress.join("\n")}`,
      );
    }
  },
});
