/**
 * Kills a consumer process mid-delivery on Deno KV and shows that the message is delivered by
 * the next process on the same database (spec 6.2.3, at-least-once; issue 6).
 *
 * @module
 */

import assert from "node:assert/strict";
import { EventBus } from "../../event_bus.ts";
import { getPublisher, type Publisher } from "../../publisher.ts";
import { topic } from "../../topic.ts";
import { Int } from "@fw/runtime";
import { DenoKvTransport } from "./deno_kv.ts";
import { JsonLinesProcess } from "../../testdata/child_process.ts";

const Job = topic("kill.job", { n: Int });
const fixture = new URL("./testdata/kv_consumer.ts", import.meta.url).pathname;
const config = new URL("../../../deno.json", import.meta.url).pathname;

interface Line {
  event: string;
  pid: number;
  n?: number;
  id?: string;
  attempt?: number;
}

/** A `deno run` of the fixture whose JSON output lines are collected as they arrive. */
class Consumer extends JsonLinesProcess<Line> {
  constructor(path: string, mode: "hang" | "handle") {
    super(["--unstable-kv", "--config", config, fixture, path, mode]);
  }
}

/**
 * A database in a temporary folder, a publishing bus on it and a first consumer process that has
 * subscribed and hangs in its handler; `fn` kills it and starts the second one. Both processes are
 * killed and the folder removed afterwards.
 */
async function killScenario(
  fn: (t: {
    first: Consumer;
    publish: Publisher<typeof Job>;
    restart: () => Consumer;
  }) => Promise<void>,
): Promise<void> {
  const dir = await Deno.makeTempDir({ prefix: "fw-denokv-kill-" });
  const path = `${dir}/events.sqlite`;
  const bus = new EventBus({ transports: { kv: new DenoKvTransport({ path }) } });
  const processes: Consumer[] = [];
  try {
    const first = new Consumer(path, "hang");
    processes.push(first);
    await first.next((l) => l.event === "ready", 30_000, "the first consumer to subscribe");
    await fn({
      first,
      publish: getPublisher(Job, { bus }),
      restart: () => {
        const next = new Consumer(path, "handle");
        processes.push(next);
        return next;
      },
    });
  } finally {
    for (const p of processes) await p.kill();
    await bus.stop();
    await Deno.remove(dir, { recursive: true });
  }
}

Deno.test("denoKvTransport delivers a message after its consumer process was killed mid-delivery", async () => {
  await killScenario(async ({ first, publish, restart }) => {
    await publish({ n: 1 }, { messageId: "kill-1" });
    const started = await first.next((l) => l.event === "started", 10_000, "the delivery");
    assert.deepEqual([started.n, started.id, started.attempt], [1, "kill-1", 1]);
    await first.kill(); // SIGKILL while the handler runs: it never acknowledged.
    assert.equal(first.lines.filter((l) => l.event === "handled").length, 0);

    // Deno KV hands an abandoned message out again once it is 5 s overdue, when a handle opens
    // the database; the restarted consumer's transport does that for itself (RECOVERY_PROBE_MS).
    const second = restart();
    const handled = await second.next(
      (l) => l.event === "handled" && l.id === "kill-1",
      20_000,
      "the redelivery in the second process",
    );
    assert.equal(handled.n, 1);
    assert.equal(handled.attempt, 1);

    // Messages published while it runs reach it too (another process, same database).
    await publish({ n: 2 }, { messageId: "kill-2" });
    const next = await second.next(
      (l) => l.event === "handled" && l.id === "kill-2",
      10_000,
      "n=2",
    );
    assert.equal(next.pid, handled.pid);
  });
});

Deno.test("denoKvTransport delivers a batch of delayed messages after its consumer process was killed mid-delivery", async () => {
  await killScenario(async ({ first, publish, restart }) => {
    // Published in one turn and due together: one queue message holding all five.
    const at = Date.now() + 300;
    await Promise.all(
      [0, 1, 2, 3, 4].map((n) => publish({ n }, { deliverAt: at, messageId: `batch-${n}` })),
    );
    await first.next((l) => l.event === "started", 10_000, "the first delivery");
    await first.kill(); // SIGKILL while handlers run: none acknowledged.

    const second = restart();
    for (let n = 0; n < 5; n++) {
      await second.next(
        (l) => l.event === "handled" && l.id === `batch-${n}`,
        20_000,
        `batch-${n} in the second process`,
      );
    }
    assert.equal(first.lines.filter((l) => l.event === "handled").length, 0);
  });
});
