/**
 * Chaos for the Redis Streams transport (issue 12), on a Redis server this test starts itself
 * (its own port and temp directory, append-only file on), never the shared one: 100 concurrent
 * publishers send messages while that Redis is restarted twice and one of two consumer processes
 * is killed with SIGKILL mid-delivery. Every message must be handled at least once; the test
 * prints the duplicate count.
 *
 * It runs the full 10,000 messages (about 11 s on the development machine), then the same with
 * the topic over three partitions (`partitions: 3`, keyed); `FW_CHAOS_MESSAGES`
 * sets another count, and `deno task chaos:redis` runs them alone.
 *
 * @module
 */

import assert from "node:assert/strict";
import { createLogger, Int, MemorySink } from "@fw/runtime";
import { EventBus } from "../../event_bus.ts";
import { handler } from "../../handler.ts";
import { getPublisher } from "../../publisher.ts";
import { topic } from "../../topic.ts";
import { KvStreamTransport } from "./redis_streams.ts";
import { RedisServer } from "./testdata/redis_server.ts";

const MESSAGES = Number(Deno.env.get("FW_CHAOS_MESSAGES") ?? 10_000);
const PUBLISHERS = 100;
const Job = topic("chaos.job", { n: Int });
const fixture = new URL("./testdata/redis_consumer.ts", import.meta.url).pathname;
const config = new URL("../../../deno.json", import.meta.url).pathname;

/** A consumer process whose output lines are counted as they arrive. */
class ConsumerProcess {
  readonly handled: number[] = [];
  started = 0;
  ready = false;
  readonly #child: Deno.ChildProcess;
  readonly #reading: Promise<void>;
  readonly #onHandled: (n: number) => void;
  #stderr = "";

  constructor(url: string, prefix: string, partitions: number, onHandled: (n: number) => void) {
    this.#onHandled = onHandled;
    this.#child = new Deno.Command(Deno.execPath(), {
      args: ["run", "-A", "--config", config, fixture, url, prefix, String(partitions)],
      stdin: "null",
      stdout: "piped",
      stderr: "piped",
    }).spawn();
    this.#reading = Promise.all([this.#read(), this.#readErrors()]).then(() => {});
  }

  async #read(): Promise<void> {
    let buffered = "";
    for await (const chunk of this.#child.stdout.pipeThrough(new TextDecoderStream())) {
      buffered += chunk;
      let nl: number;
      while ((nl = buffered.indexOf("\n")) >= 0) {
        const line = buffered.slice(0, nl);
        buffered = buffered.slice(nl + 1);
        if (line === "ready") this.ready = true;
        else if (line.startsWith("s ")) this.started++;
        else if (line.startsWith("h ")) {
          const n = Number(line.split(" ")[1]);
          this.handled.push(n);
          this.#onHandled(n);
        }
      }
    }
  }

  async #readErrors(): Promise<void> {
    for await (const chunk of this.#child.stderr.pipeThrough(new TextDecoderStream())) {
      this.#stderr += chunk;
    }
  }

  /** Started deliveries that have not ended. */
  get running(): number {
    return this.started - this.handled.length;
  }

  get stderr(): string {
    return this.#stderr;
  }

  async kill(signal: Deno.Signal = "SIGKILL"): Promise<void> {
    try {
      this.#child.kill(signal);
    } catch { /* exited */ }
    await this.#child.status;
    await this.#reading;
  }
}

async function until(check: () => boolean, ms: number, what: string, detail = () => "") {
  const end = Date.now() + ms;
  while (!check()) {
    if (Date.now() > end) {
      throw new Error(`Timed out after ${ms} ms waiting for ${what}${detail()}`);
    }
    await new Promise((r) => setTimeout(r, 20));
  }
}

/** The chaos run: `partitions` streams for the topic, in the publisher and both consumers. */
async function chaos(MESSAGES: number, partitions: number): Promise<void> {
  const server = await RedisServer.start();
  const prefix = "chaos:";
  const seen = new Set<number>();
  let handledLines = 0;
  const onHandled = (n: number) => {
    handledLines++;
    seen.add(n);
  };
  const transport = new KvStreamTransport({
    url: server.url,
    keyPrefix: prefix,
    publishTimeoutMs: 3000,
    partitions,
  });
  const bus = new EventBus({
    transports: { redis: transport },
    logger: createLogger({ level: "error" }),
  });
  const publish = getPublisher(Job, { bus });
  const victim = new ConsumerProcess(server.url, prefix, partitions, onHandled);
  const survivor = new ConsumerProcess(server.url, prefix, partitions, onHandled);
  const faults: string[] = [];
  let publishErrors = 0;
  try {
    await until(
      () => victim.ready && survivor.ready,
      60_000,
      "both consumers to subscribe",
      () => victim.stderr + survivor.stderr,
    );
    let next = 0;
    const publisher = async () => {
      while (next < MESSAGES) {
        const n = next++;
        for (;;) {
          try {
            await publish({ n }, { messageId: `chaos-${n}`, key: `k${n % 64}` });
            break;
          } catch {
            publishErrors++; // Redis is down: publish again (never vanish, at worst a duplicate)
            await new Promise((r) => setTimeout(r, 100));
          }
        }
      }
    };
    const chaos = async () => {
      const at = (share: number) =>
        until(() => seen.size >= MESSAGES * share, 120_000, `${share * 100}% handled`);
      await at(0.15);
      await server.down();
      faults.push(`restart 1 at ${seen.size} handled`);
      await new Promise((r) => setTimeout(r, 300));
      await server.up();
      await at(0.4);
      await until(
        () => victim.running > 0,
        30_000,
        "the victim to be mid-delivery",
        () =>
          ` (${seen.size} of ${MESSAGES} handled; victim started ${victim.started}, ended ${victim.handled.length}; survivor started ${survivor.started}, ended ${survivor.handled.length}) ${
            victim.stderr.slice(-500)
          }`,
      );
      faults.push(`SIGKILL with ${victim.running} deliveries running, at ${seen.size} handled`);
      await victim.kill("SIGKILL");
      await at(0.6);
      await server.down();
      faults.push(`restart 2 at ${seen.size} handled`);
      await new Promise((r) => setTimeout(r, 300));
      await server.up();
    };
    await Promise.all([chaos(), ...Array.from({ length: PUBLISHERS }, publisher)]);
    await until(
      () => seen.size === MESSAGES,
      120_000,
      "every message",
      () => ` (${seen.size} of ${MESSAGES}) ${survivor.stderr}`,
    );
    const duplicates = handledLines - seen.size;
    console.log(
      `chaos (${partitions} partition${
        partitions > 1 ? "s" : ""
      }): ${MESSAGES} messages, ${seen.size} handled, ${duplicates} duplicates, ${publishErrors} publish errors retried; ${
        faults.join("; ")
      }; victim handled ${victim.handled.length}, survivor ${survivor.handled.length}`,
    );
    assert.equal(seen.size, MESSAGES);
    assert.equal(faults.length, 3);
  } finally {
    await victim.kill();
    await survivor.kill();
    await bus.stop();
    await server.destroy();
  }
}

Deno.test(
  `kvStreamTransport chaos: ${MESSAGES} messages from ${PUBLISHERS} publishers, Redis restarted twice, a consumer SIGKILLed mid-delivery: none lost`,
  () => chaos(MESSAGES, 1),
);

Deno.test(
  `kvStreamTransport chaos with 3 partitions: ${MESSAGES} messages, Redis restarted twice, a consumer SIGKILLed mid-delivery: none lost`,
  () => chaos(MESSAGES, 3),
);

Deno.test("kvStreamTransport publish rejects within publishTimeoutMs while Redis is down", async () => {
  const server = await RedisServer.start();
  const transport = new KvStreamTransport({
    url: server.url,
    keyPrefix: "down:",
    publishTimeoutMs: 300,
  });
  try {
    await transport.connect();
    await server.down();
    await assert.rejects(
      () =>
        transport.publish({
          id: "1",
          topic: "a.b",
          payload: {},
          attributes: {},
          traceId: "t",
          publishedAt: 0,
        }),
      /Cannot publish to topic "a\.b"/,
    );
    await server.up();
  } finally {
    // Right after the restart the client is usually still in its reconnect back-off: close()
    // must not wait for the publish that timed out and still sits in the offline queue.
    await finishes(transport.close(), "close() after the restart");
    await server.destroy();
  }
});

/** Fails (instead of hanging the suite) when `promise` has not settled within 60 s. */
async function finishes<T>(promise: Promise<T>, what: string): Promise<T> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  try {
    return await Promise.race([
      promise,
      new Promise<never>((_, reject) => {
        timer = setTimeout(() => reject(new Error(`${what} never finished`)), 60_000);
      }),
    ]);
  } finally {
    clearTimeout(timer);
  }
}

Deno.test("kvStreamTransport close() finishes while Redis is down, with a subscriber and a publish waiting", async () => {
  const server = await RedisServer.start();
  const sink = new MemorySink();
  const transport = new KvStreamTransport({
    url: server.url,
    keyPrefix: "gone:",
    publishTimeoutMs: 300,
    logger: createLogger({ sink, level: "warn" }),
  });
  const bus = new EventBus({ transports: { redis: transport }, logger: createLogger({ sink }) });
  try {
    await bus.add(handler(Job).options({ group: "g" }).handle(() => {}));
    await bus.start();
    await server.down();
    const publish = getPublisher(Job, { bus });
    await assert.rejects(() => publish({ n: 1 }), /Cannot publish to topic "chaos\.job"/);
    const waiting = transport.publish({
      id: "2",
      topic: Job.name,
      payload: { n: 2 },
      attributes: {},
      traceId: "t",
      publishedAt: 0,
    });
    const outcome = waiting.then(() => "published", (e: Error) => e.message);
    await finishes(bus.stop(), "close() while Redis is down");
    assert.match(await outcome, /Cannot publish to topic "chaos\.job"/);
    assert.ok(
      sink.records.some((r) => r.message.includes("did not answer on close")),
      "it says it skipped unregistering",
    );
    await assert.rejects(() => publish({ n: 3 }), /the transport is closed/);
  } finally {
    await transport.close();
    await server.destroy();
  }
});
