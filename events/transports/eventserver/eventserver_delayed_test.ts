import assert from "node:assert/strict";
import { application, http } from "@fw/application";
import { events, getPublisher, handler, Int, memoryRealtime, topic } from "@fw/events";
import { eventServer } from "@fw/events/server";
import { createLogger } from "@fw/runtime";

const Reminders = topic("shop.reminders", { n: Int }, { version: "1" });
const logger = createLogger({ level: "silent" });

async function until(what: string, check: () => boolean): Promise<void> {
  const deadline = Date.now() + 5000;
  while (!check()) {
    if (Date.now() > deadline) throw new Error(`Timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 10));
  }
}

Deno.test("eventServerTransport() delayed publish: the server's handlers and its realtime subscribers see it no earlier than its time", async () => {
  const realtime = memoryRealtime({ logger });
  const handled: Array<{ n: number; at: number }> = [];
  const live: Array<{ n: number; at: number }> = [];
  await realtime.subscribe(Reminders.name, (m) => {
    live.push({ n: (m.payload as { n: number }).n, at: Date.now() });
  });
  const server = application({ logger })
    .use(http({ port: 0, hostname: "127.0.0.1", signals: false }))
    .use(events({
      autoScan: false,
      brokerPort: false,
      handlers: [
        handler(Reminders).handle((m) => void handled.push({ n: m.payload.n, at: Date.now() })),
      ],
    }))
    .use(eventServer({ topics: [Reminders], realtime, access: () => true }));
  await server.start();
  const origin = `http://127.0.0.1:${server.address!.port}`;
  const client = events({
    autoScan: false,
    brokerPort: false,
    transport: "eventserver",
    eventServer: { origin, audience: "events", contractVersion: "1" },
  });
  const app = application({ logger }).use(client);
  await app.start();
  try {
    const publish = getPublisher(Reminders, { bus: client.bus! });
    const due = Date.now() + 500;
    await publish({ n: 1 }, { deliverAt: due });
    await publish({ n: 2 });
    await until("the undelayed message", () => handled.length >= 1 && live.length >= 1);
    assert.deepEqual(handled.map((h) => h.n), [2], "the delayed one waits");
    assert.deepEqual(live.map((h) => h.n), [2]);
    await until("the delayed message", () => handled.length >= 2 && live.length >= 2);
    for (const seen of [handled[1], live[1]]) {
      assert.equal(seen.n, 1);
      assert.ok(seen.at >= due, `came ${due - seen.at} ms early`);
    }
    await assert.rejects(
      publish({ n: 3 }, { delay: 31 * 24 * 3600_000 }),
      /^TypeError: Invalid publish option "delay" for topic "shop.reminders": transport "eventserver" holds messages at most 2592000000 ms ahead/,
    );
  } finally {
    await app.stop();
    await server.stop();
    await realtime.close();
  }
});

Deno.test("Event Server: a publish request's deliverAt is answered with deliverAt and no stream id, and refused beyond 30 days", async () => {
  const realtime = memoryRealtime({ logger });
  const server = application({ logger })
    .use(http({ port: 0, hostname: "127.0.0.1", signals: false }))
    .use(eventServer({ topics: [Reminders], realtime, access: () => true }));
  await server.start();
  const url = `http://127.0.0.1:${server.address!.port}/events/publish`;
  const post = (body: unknown) =>
    fetch(url, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify(body),
    }).then(async (r) => ({ status: r.status, body: await r.json() }));
  try {
    const discovery = await fetch(new URL("/.well-known/fw/events", url)).then((r) => r.json());
    assert.equal(discovery.features.delayedPublish, true);
    const at = Date.now() + 60_000;
    const ok = await post({ id: "d-1", topic: Reminders.name, payload: { n: 1 }, deliverAt: at });
    assert.equal(ok.status, 200);
    assert.equal(ok.body.deliverAt, at);
    assert.equal(ok.body.streamId, undefined);
    const far = await post({
      id: "d-2",
      topic: Reminders.name,
      payload: { n: 1 },
      deliverAt: Date.now() + 31 * 24 * 3600_000,
    });
    assert.equal(far.status, 400);
    assert.equal(far.body.code, "invalid_request");
    assert.match(far.body.message, /^body\.deliverAt must be at most 2592000000 ms ahead$/);
    const past = await post({ id: "d-3", topic: Reminders.name, payload: { n: 1 }, deliverAt: 5 });
    assert.equal(past.status, 200);
    assert.equal(typeof past.body.streamId, "string", "a past deliverAt is published now");
  } finally {
    await server.stop();
    await realtime.close();
  }
});
