import assert from "node:assert/strict";
import { createLogger, Int, MemorySink } from "@fw/runtime";
import { EventBus } from "../../event_bus.ts";
import { handler } from "../../handler.ts";
import type { HandlerOptions, Message } from "../../handler_types.ts";
import { getPublisher } from "../../publisher.ts";
import { deadLetterTopic, topic } from "../../topic.ts";
import { cloudPubSubTransport } from "./cloud_pubsub.ts";
import {
  type GoogleMessageLike,
  googlePubSubClient,
  type GooglePubSubLike,
  type GoogleSubscriptionLike,
  type GoogleTopicLike,
} from "./google_pubsub.ts";

/** An in-memory stand-in with the shape of `@google-cloud/pubsub`: nack redelivers at once. */
class FakeSubscription implements GoogleSubscriptionLike {
  listener: ((m: GoogleMessageLike) => void) | undefined;
  errorListener: ((e: Error) => void) | undefined;
  closed = false;
  deleted = false;
  constructor(readonly topic: FakeTopic, readonly name: string, readonly options: unknown) {}
  exists(): Promise<[boolean]> {
    return Promise.resolve([this.topic.subs.has(this.name)]);
  }
  on(event: string, listener: (arg: never) => void): this {
    if (event === "message") this.listener = listener as (m: GoogleMessageLike) => void;
    if (event === "error") this.errorListener = listener as (e: Error) => void;
    return this;
  }
  close(): Promise<void> {
    this.closed = true;
    return Promise.resolve();
  }
  delete(): Promise<unknown> {
    this.deleted = true;
    this.topic.subs.delete(this.name);
    return Promise.resolve([]);
  }
  deliver(id: string, data: Uint8Array, attributes: Record<string, string>, attempt: number) {
    setTimeout(() => {
      if (this.closed) return;
      this.listener?.({
        id,
        data,
        attributes,
        deliveryAttempt: attempt,
        ack: () => {},
        nack: () => this.deliver(id, data, attributes, attempt + 1),
      });
    }, 1);
  }
}

class FakeTopic implements GoogleTopicLike {
  readonly subs = new Map<string, FakeSubscription>();
  created = false;
  constructor(readonly name: string, readonly world: FakePubSub) {}
  exists(): Promise<[boolean]> {
    return Promise.resolve([this.created]);
  }
  create(): Promise<unknown> {
    this.created = true;
    return Promise.resolve([this]);
  }
  publishMessage(m: { data: Uint8Array; attributes?: Record<string, string> }): Promise<string> {
    const id = String(++this.world.ids);
    for (const s of this.subs.values()) s.deliver(id, m.data, { ...m.attributes }, 1);
    return Promise.resolve(id);
  }
  getSubscriptions(): Promise<[unknown[]]> {
    return Promise.resolve([[...this.subs.values()]]);
  }
  subscription(name: string): GoogleSubscriptionLike {
    return this.subs.get(name) ?? new FakeSubscription(this, name, undefined);
  }
  createSubscription(
    name: string,
    options?: Record<string, unknown>,
  ): Promise<[GoogleSubscriptionLike]> {
    const s = new FakeSubscription(this, name, options);
    this.subs.set(name, s);
    return Promise.resolve([s]);
  }
}

class FakePubSub implements GooglePubSubLike {
  ids = 0;
  readonly topics = new Map<string, FakeTopic>();
  topic(name: string): FakeTopic {
    let t = this.topics.get(name);
    if (!t) this.topics.set(name, t = new FakeTopic(`projects/p/topics/${name}`, this));
    return t;
  }
  close(): Promise<void> {
    return Promise.resolve();
  }
}

const Job = topic("cloud.job", { n: Int });
const FAST: HandlerOptions = { maxBackoff: 20, jitter: 0, timeout: 2000 };

async function until(check: () => boolean, what: string): Promise<void> {
  const end = Date.now() + 5000;
  while (!check()) {
    if (Date.now() > end) throw new Error(`Timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 5));
  }
}

function busOn(pubsub: FakePubSub): EventBus {
  const transport = cloudPubSubTransport({
    client: googlePubSubClient(pubsub, { topicPrefix: "app-", deadLetterTopic: "fw-dead" }),
  });
  return new EventBus({
    transports: { cloud: transport },
    logger: createLogger({ sink: new MemorySink() }),
  });
}

Deno.test("cloudPubSubTransport over googlePubSubClient: ack, nack with attempts, subscription settings", async () => {
  const pubsub = new FakePubSub();
  const bus = busOn(pubsub);
  const attempts: number[] = [];
  await bus.add(
    handler(Job).options({ ...FAST, group: "billing" }).handle((m) => {
      attempts.push(m.attempt);
      if (m.attempt === 1) throw new Error("once");
    }),
  );
  await bus.start();
  try {
    await getPublisher(Job, { bus })({ n: 1 });
    await until(() => attempts.length === 2, "the retry");
    assert.deepEqual(attempts, [1, 2]);
    const sub = pubsub.topic("app-cloud.job").subs.get("app-cloud.job~billing")!;
    assert.deepEqual(sub.options, {
      retryPolicy: { minimumBackoff: { seconds: 1 }, maximumBackoff: { seconds: 60 } },
      deadLetterPolicy: { deadLetterTopic: "projects/p/topics/fw-dead", maxDeliveryAttempts: 100 },
    });
  } finally {
    await bus.stop();
  }
});

Deno.test("cloudPubSubTransport over googlePubSubClient: dead letters reach a .dlq subscription, broadcast subscriptions are deleted", async () => {
  const pubsub = new FakePubSub();
  const bus = busOn(pubsub);
  const dead: Message<{ n: number }>[] = [];
  await bus.add(
    handler(Job).options({ ...FAST, group: "g", maxRetries: 1 }).handle(() => {
      throw new Error("broken");
    }),
  );
  await bus.add(
    handler(deadLetterTopic(Job)).options({ ...FAST, group: "ops" }).handle((m) =>
      void dead.push(m)
    ),
  );
  await bus.add(
    handler(Job).options({ ...FAST, group: "cache", distribution: "broadcast" }).handle(() => {}),
  );
  await bus.start();
  await getPublisher(Job, { bus })({ n: 4 });
  await until(() => dead.length === 1, "the dead letter");
  assert.equal(dead[0].attributes["dlq.error"], "broken");
  assert.equal(dead[0].attributes["dlq.attempts"], "2");
  assert.equal((await bus.deadLetters()).length, 0);
  const t = pubsub.topic("app-cloud.job");
  const broadcast = [...t.subs.values()].find((s) => s.name.startsWith("app-cloud.job~cache~"))!;
  assert.ok(broadcast, "a broadcast instance has its own subscription");
  await bus.stop();
  assert.equal(broadcast.deleted, true);
  assert.ok(t.subs.has("app-cloud.job~g"), "a competing group's subscription stays");
});

Deno.test("cloudPubSubTransport fails at creation naming the client's missing method", () => {
  const client = {
    publish: () => Promise.resolve(""),
    subscribe: () => Promise.resolve({ close: () => Promise.resolve() }),
    close: () => Promise.resolve(),
  };
  assert.throws(
    () => cloudPubSubTransport({ client: client as never }),
    (err: Error) =>
      err instanceof TypeError &&
      err.message ===
        'Invalid cloudPubSubTransport() option "client": missing method "hasSubscriptions"',
  );
  assert.throws(
    () => cloudPubSubTransport({ client: undefined as never }),
    /option "client": expected an object with methods "publish", "subscribe"/,
  );
  assert.throws(
    () =>
      cloudPubSubTransport({
        client: { ...client, hasSubscriptions: () => Promise.resolve(false) },
        maxDeliveries: 1,
      }),
    /option "maxDeliveries": expected an integer >= 2, got 1/,
  );
});

Deno.test("CloudPubSubTransport.publish refuses attributes that are not strings", async () => {
  const transport = cloudPubSubTransport({ client: googlePubSubClient(new FakePubSub()) });
  await assert.rejects(
    transport.publish({
      id: "1",
      topic: "a",
      payload: 1,
      attributes: { x: 5 } as never,
      traceId: "t",
      publishedAt: 0,
    }),
    /Cannot publish to topic "a": envelope field "attributes" must be a map of strings/,
  );
  await transport.close();
});

Deno.test("googlePubSubClient hands subscription stream errors to onError", async () => {
  const pubsub = new FakePubSub();
  const errors: string[] = [];
  const client = googlePubSubClient(pubsub, {
    onError: (err, name) => errors.push(`${name}: ${err.message}`),
  });
  const sub = await client.subscribe(
    { topic: "t.x", subscription: "t.x~g", ephemeral: false, maxDeliveries: 5 },
    () => {},
  );
  pubsub.topic("t.x").subs.get("t.x~g")!.errorListener!(new Error("PERMISSION_DENIED"));
  assert.deepEqual(errors, ["t.x~g: PERMISSION_DENIED"]);
  await sub.close();
  await client.close();
});
