import assert from "node:assert/strict";
import { api, application, endpoint, http, type Middleware } from "@fw/application";
import { generate } from "@fw/application/cli";
import {
  busOf,
  type EventContext,
  events,
  getPublisher,
  handler,
  httpBrokerTransport,
  Int,
  MemoryBroker,
  needBus,
  topic,
  useContext,
} from "@fw/events";
import { activeBus } from "../events/publisher.ts";
import { createLogger, MemoryMeter, MemorySink, type Plugin, runInContext } from "@fw/runtime";

Deno.env.set("EVENTS_BROKER_PORT", "0");

const quiet = () => createLogger({ level: "silent" });
const until = async (check: () => boolean | Promise<boolean>, what: string, ms = 5000) => {
  const end = Date.now() + ms;
  while (!(await check())) {
    if (Date.now() > end) throw new Error(`Timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 5));
  }
};

Deno.test("events() discovers *.on.ts handlers through the generated loader", async () => {
  const entry = new URL("./fixtures/events_app/main.ts", import.meta.url);
  const { written } = await generate(entry.href);
  const loaderPath = written.find((p) => p.endsWith("events.gen.ts"))!;
  const loader = await Deno.readTextFile(loaderPath);
  assert.match(loader, /"deep\/nested.on.ts": \$0,\n {4}"ping.on.ts": \$1,/);
  assert.match(loader, /"tick.on.ts": \$2,/);
  assert.doesNotMatch(loader, /helper/);
  const sink = new MemorySink();
  const plugin = events({ root: entry, brokerPort: false });
  const app = application({ root: entry, logger: createLogger({ sink }) }).use(plugin);
  await app.start();
  try {
    assert.deepEqual(plugin.bus!.registrations.map((r) => r.name), [
      "events/deep/nested.on.ts#nested",
      "events/ping.on.ts#default",
      "events/ping.on.ts#second",
    ]);
    assert.deepEqual(plugin.scheduler!.schedules.map((s) => s.name), ["fixture.nightly"]);
    assert.ok(!sink.records.some((r) => r.message.includes("out of date")), "loader used");
    const { Ping, seen } = await import("./fixtures/events_app/topics.ts");
    await getPublisher(Ping)({ n: 1 });
    await until(() => seen.length === 3, "three handlers");
    assert.deepEqual([...seen].sort(), ["default:1", "nested:1", "second:1"]);
  } finally {
    await app.stop();
  }
});

Deno.test("example app: POST /orders publishes; handlers see the request's trace id and user", async () => {
  const { app } = await import("../examples/app/src/main.ts");
  const user = { sub: "user-7", email: "u7@example.com", scopes: [], roles: [], claims: {} };
  const signIn: Middleware = (_req, _info, next) => runInContext({ user }, next);
  const auth: Plugin = { name: "test-auth", setup: (ctx) => ctx.addMiddleware(signIn) };
  app.use(auth);
  await app.start();
  try {
    const base = app.address!.url;
    const id = crypto.randomUUID();
    const traceId = "4bf92f3577b34da6a3ce929d0e0e4736";
    const res = await fetch(`${base}/orders`, {
      method: "POST",
      headers: {
        "content-type": "application/json",
        traceparent: `00-${traceId}-00f067aa0ba902b7-01`,
      },
      body: JSON.stringify({
        id,
        customer: "c-1",
        items: [{ sku: "a", qty: 1 }],
        total: 5000,
        currency: "EUR",
        placedAt: "2026-11-23T10:00:00Z",
      }),
    });
    assert.equal(res.status, 201);
    await res.body?.cancel();
    let entries: Array<{ event: string; orderId: string; traceId: string; user?: string }> = [];
    await until(async () => {
      const r = await fetch(`${base}/audit`);
      entries = (await r.json()).filter((e: { orderId: string }) => e.orderId === id);
      return entries.length === 3;
    }, "three audit entries");
    assert.deepEqual(entries.map((e) => e.event).sort(), [
      "analytics.counted",
      "fulfilment.queued",
      "notification.sent",
    ]);
    assert.ok(entries.every((e) => e.traceId === traceId), JSON.stringify(entries));
    assert.equal(entries.find((e) => e.event === "fulfilment.queued")!.user, "user-7");
  } finally {
    await app.stop();
  }
});

const Ping = topic("routing.ping", { n: Int });

/** An in-process `events()` with one handler of `Ping`, no scan and (by default) no local broker. */
const pingEvents = (onPing: (n: number) => void = () => {}, brokerPort: 0 | false = false) =>
  events({
    autoScan: false,
    brokerPort,
    handlers: [handler(Ping).handle((m) => onPing(m.payload.n))],
  });

Deno.test("events() routes by channel first, then match, then defaultTransport", async () => {
  const a = new MemoryBroker(), b = new MemoryBroker(), c = new MemoryBroker();
  const Billing = topic("orders.billed", { n: Int }, { channel: "billing" });
  const Orders = topic("orders.created", { n: Int });
  const got: string[] = [];
  const on = (t: typeof Ping, tag: string) => handler(t).handle(() => void got.push(tag));
  const plugin = events({
    autoScan: false,
    transports: { a, b, c },
    routes: [{ match: "orders.*", transport: "b" }, { channel: "billing", transport: "c" }],
    defaultTransport: "a",
    handlers: [on(Billing, "billing"), on(Orders, "orders"), on(Ping, "ping")],
  });
  const app = application({ logger: quiet() }).use(plugin);
  await app.start();
  try {
    const bus = plugin.bus!;
    assert.equal(bus.transportName(Billing.name, Billing.channel), "c");
    assert.equal(bus.transportName(Orders.name), "b");
    assert.equal(bus.transportName(Ping.name), "a");
    // Publishing straight onto a transport reaches only the handlers routed to it.
    const env = (t: string) => ({
      id: t,
      topic: t,
      payload: { n: 1 },
      attributes: {},
      traceId: "t",
      publishedAt: 0,
    });
    await c.publish(env("orders.billed"));
    await b.publish(env("orders.billed"));
    await b.publish(env("orders.created"));
    await a.publish(env("routing.ping"));
    await until(() => got.length === 3, "three deliveries");
    assert.deepEqual(got, ["billing", "orders", "ping"]);
  } finally {
    await app.stop();
  }
});

Deno.test("events() fails at start-up when a handler on an external transport has no group", async () => {
  const app = application({ logger: quiet() }).use(events({
    autoScan: false,
    transport: httpBrokerTransport({ url: "http://127.0.0.1:9" }),
    handlers: [handler(Ping).handle(() => {})],
  }));
  await assert.rejects(app.start(), /needs a stable "group" option: transport "local" is external/);
  assert.throws(
    () => events({ transport: new MemoryBroker(), transports: { a: new MemoryBroker() } }),
    /use "transport" or "transports", not both/,
  );
  assert.throws(
    () =>
      events({ transports: { a: new MemoryBroker() }, routes: [{ match: "x.*", transport: "z" }] }),
    /"routes\[0\].transport": "z" is not a key of transports/,
  );
});

Deno.test("events() shares the local broker between processes through EVENTS_ENDPOINT", async () => {
  const seenA: number[] = [], seenB: number[] = [];
  const hostPlugin = events({
    autoScan: false,
    brokerPort: 0,
    handlers: [
      handler(Ping).options({ group: "host" }).handle((m) => void seenA.push(m.payload.n)),
    ],
  });
  const host = application({ logger: quiet() }).use(hostPlugin);
  await host.start();
  const guest = application({ logger: quiet() }).use(events({
    autoScan: false,
    endpoint: hostPlugin.localBroker!.url,
    handlers: [
      handler(Ping).options({ group: "guest" }).handle((m) => void seenB.push(m.payload.n)),
    ],
  }));
  await guest.start();
  try {
    // The guest started last, so its bus is the active one: this publish goes over HTTP.
    await getPublisher(Ping)({ n: 1 });
    await until(() => seenA.length === 1 && seenB.length === 1, "both processes");
    assert.deepEqual([seenA, seenB], [[1], [1]]);
  } finally {
    await guest.stop();
    await host.stop();
  }
});

Deno.test("events() warns and carries on in-process when the broker port is taken", async () => {
  const taken = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  const port = (taken.addr as Deno.NetAddr).port;
  const sink = new MemorySink();
  const seen: number[] = [];
  const plugin = events({
    autoScan: false,
    brokerPort: port,
    handlers: [handler(Ping).handle((m) => void seen.push(m.payload.n))],
  });
  const app = application({ logger: createLogger({ sink }) }).use(plugin);
  await app.start();
  try {
    assert.ok(
      sink.records.some((r) => r.level === "warn" && r.message.includes(`port ${port} is in use`)),
    );
    assert.equal(plugin.localBroker, undefined);
    await getPublisher(Ping)({ n: 2 });
    await until(() => seen.length === 1, "the in-process delivery");
  } finally {
    await app.stop();
    taken.close();
  }
});

Deno.test("events() in production on the in-process broker makes its bus on first use: a publish or a local broker request", async () => {
  const seen: number[] = [];
  const make = () => pingEvents((n) => seen.push(n), 0);
  const plugin = make();
  const app = application({ logger: quiet(), production: true }).use(plugin);
  await app.start();
  try {
    assert.equal(plugin.bus, undefined, "no bus before its first use");
    assert.ok(plugin.localBroker, "the local broker listens at start");
    assert.deepEqual(await plugin.deadLetters(), []);
    // publishes made while the bus is being made keep their order
    const publish = getPublisher(Ping);
    await Promise.all([publish({ n: 1 }), publish({ n: 2 }), publish({ n: 3 })]);
    assert.ok(plugin.bus && plugin.broker);
    await until(() => seen.length === 3, "the deliveries");
    assert.deepEqual(seen, [1, 2, 3]);
    await assert.rejects(publish({ n: "x" } as never));
  } finally {
    await app.stop();
  }
  // a request to the local broker makes it too
  const second = make();
  const other = application({ logger: quiet(), production: true }).use(second);
  await other.start();
  try {
    assert.equal(second.bus, undefined);
    const res = await fetch(`${second.localBroker!.url}/publish`, {
      method: "POST",
      body: JSON.stringify({
        id: crypto.randomUUID(),
        topic: "routing.ping",
        payload: { n: 4 },
        attributes: {},
        traceId: "0af7651916cd43dd8448eb211c80319c",
        publishedAt: Date.now(),
      }),
    });
    assert.equal(res.status, 202, await res.text());
    assert.ok(second.bus);
    await until(() => seen.includes(4), "the delivery through the local broker");
  } finally {
    await other.stop();
  }
  // stopped before any use: nothing was made
  const third = make();
  const unused = application({ logger: quiet(), production: true }).use(third);
  await unused.start();
  await unused.stop();
  assert.equal(third.bus, undefined);
  await assert.rejects(getPublisher(Ping)({ n: 5 }), /no events\(\) plugin is running/);
});

Deno.test("events() made on first use: a publish made the moment the bus appears comes after those that waited for it", async () => {
  const seen: number[] = [];
  const plugin = pingEvents((n) => seen.push(n));
  const app = application({ logger: quiet(), production: true }).use(plugin);
  await app.start();
  try {
    const publish = getPublisher(Ping);
    const waited = [publish({ n: 1 }), publish({ n: 2 })];
    // publish 3 as soon as publishers reach the bus: wait (in timers) until the bus is made,
    // then poll in microtasks, so nothing else runs in between
    while (plugin.bus === undefined) await new Promise((r) => setTimeout(r, 0));
    let late: Promise<unknown> | undefined;
    const poll = (left: number): Promise<void> =>
      Promise.resolve().then(() => {
        if (activeBus() !== undefined) late = publish({ n: 3 });
        else if (left > 0) return poll(left - 1);
        else return new Promise((r) => setTimeout(r, 0)).then(() => poll(10_000));
      });
    await poll(10_000);
    await Promise.all([...waited, late]);
    await until(() => seen.length === 3, "the deliveries");
    assert.deepEqual(seen, [1, 2, 3]);
  } finally {
    await app.stop();
  }
});

Deno.test("events() made on first use keeps its place among running applications: the last started publishes", async () => {
  const seen: string[] = [];
  const make = (name: string) => pingEvents((n) => seen.push(`${name}:${n}`));
  const eager = application({ logger: quiet() }).use(make("eager"));
  const lazy = application({ logger: quiet(), production: true }).use(make("lazy"));
  await eager.start();
  await lazy.start(); // started last: its bus, not made yet, is the one publishers use
  try {
    await getPublisher(Ping)({ n: 1 });
    await until(() => seen.length === 1, "the first delivery");
    await lazy.stop();
    await getPublisher(Ping)({ n: 2 });
    await until(() => seen.length === 2, "the second delivery");
    assert.deepEqual(seen, ["lazy:1", "eager:2"]);
  } finally {
    await lazy.stop();
    await eager.stop();
  }
});

Deno.test("events() on the in-process broker fails at start-up for a group joined as competing and broadcast, in production too", async () => {
  for (const production of [false, true]) {
    const app = application({ logger: quiet(), production }).use(events({
      autoScan: false,
      brokerPort: false,
      handlers: [
        handler(Ping).options({ group: "g" }).handle(() => {}),
        handler(Ping).options({ group: "g", distribution: "broadcast" }).handle(() => {}),
      ],
    }));
    await assert.rejects(
      app.start(),
      /Cannot join group "g" of topic "routing.ping" as broadcast: it is competing/,
    );
    await app.stop();
  }
});

Deno.test("events() in production makes its bus at warmup when something reads it: a meter or needBus()", async () => {
  const meter = new MemoryMeter();
  const telemetry: Plugin = { name: "test-telemetry", setup: (ctx) => ctx.setMeter(meter) };
  const metered = pingEvents();
  const a = application({ logger: quiet(), production: true }).use(telemetry).use(metered);
  await a.warmup();
  assert.ok(metered.bus);
  await a.stop();
  const reader: Plugin = { name: "reader", setup: (ctx) => needBus(ctx.container) };
  const needed = pingEvents();
  const b = application({ logger: quiet(), production: true }).use(reader).use(needed);
  await b.start();
  assert.ok(needed.bus);
  assert.equal(busOf(b.context.container), needed.bus);
  await b.stop();
});

Deno.test("events() records the spec 6.3 metrics through the application's meter", async () => {
  const meter = new MemoryMeter();
  const telemetry: Plugin = { name: "test-telemetry", setup: (ctx) => ctx.setMeter(meter) };
  let fail = true;
  const app = application({ logger: quiet() }).use(telemetry).use(events({
    autoScan: false,
    brokerPort: false,
    handlers: [
      handler(Ping).options({ maxRetries: 0 }).handle(() => {
        if (fail) throw new Error("no");
      }),
    ],
  }));
  await app.start();
  try {
    const publish = getPublisher(Ping);
    await publish({ n: 1 });
    await until(() => meter.sum("events.handle.routing.ping.dlq") === 1, "the dead letter");
    fail = false;
    await publish({ n: 2 });
    await assert.rejects(publish({ n: "x" } as never));
    await until(() => meter.sum("events.handle.routing.ping.success") === 1, "the success");
    assert.equal(meter.sum("events.publish.routing.ping"), 2);
    assert.equal(meter.sum("events.publish.routing.ping.error"), 1);
    assert.equal(meter.sum("events.handle.routing.ping.failure"), 1);
    assert.equal(meter.count("events.handle.routing.ping.duration"), 2);
  } finally {
    await app.stop();
  }
});

Deno.test("a route handler publishes with its trace id; the event context carries it", async () => {
  const contexts: EventContext[] = [];
  const app = application({ logger: quiet() })
    .use(http({ port: 0, hostname: "127.0.0.1" }))
    .use(
      api({ autoScan: false }).route(
        "POST",
        "/ping",
        endpoint().handle(async () => {
          await getPublisher(Ping)({ n: 1 });
          return { ok: true };
        }),
      ),
    )
    .use(events({
      autoScan: false,
      brokerPort: false,
      handlers: [handler(Ping).handle(() => void contexts.push({ ...useContext<EventContext>() }))],
    }));
  await app.start();
  try {
    const res = await fetch(`${app.address!.url}/ping`, {
      method: "POST",
      headers: { traceparent: "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01" },
    });
    assert.equal(res.status, 200);
    await res.body?.cancel();
    await until(() => contexts.length === 1, "the handler");
    assert.equal(contexts[0].traceId, "0af7651916cd43dd8448eb211c80319c");
    assert.equal(contexts[0].eventTopic, "routing.ping");
    assert.equal(contexts[0].eventAttempt, 1);
    assert.match(contexts[0].eventMessageId, /^[0-9a-f-]{36}$/);
  } finally {
    await app.stop();
  }
});

Deno.test("events({ schedules }) runs a schedule on the app's clock, meter, logger and container", async () => {
  const { ManualClock, provider } = await import("@fw/runtime");
  const { schedule } = await import("@fw/events");
  const clock = new ManualClock(Date.UTC(2030, 0, 1));
  const meter = new MemoryMeter();
  const sink = new MemorySink();
  const telemetry: Plugin = { name: "test-telemetry", setup: (ctx) => ctx.setMeter(meter) };
  const Greeting = provider({ name: "Greeting", factory: () => "hello" });
  const seen: string[] = [];
  const app = application({ clock, logger: createLogger({ sink }) }).use(telemetry).use(events({
    autoScan: false,
    brokerPort: false,
    schedules: [
      schedule("app.minutely").options({ cron: "* * * * *" }).inject({ Greeting })
        .handle(({ Greeting }, run) => {
          seen.push(`${Greeting} ${run.scheduledAt.toISOString()}`);
        }),
    ],
  }));
  await app.start();
  try {
    await clock.advance(120_000);
  } finally {
    await app.stop();
  }
  assert.deepEqual(seen, ["hello 2030-01-01T00:01:00.000Z", "hello 2030-01-01T00:02:00.000Z"]);
  assert.equal(meter.sum("events.schedule.app.minutely.run"), 2);
  assert.equal(sink.records.filter((r) => r.message === "schedule run").length, 2);
});

Deno.test("events() fails at start-up for a bad schedule: not a schedule, bad cron, unknown transport", async () => {
  const { schedule } = await import("@fw/events");
  assert.throws(
    () => events({ schedules: [{} as never] }),
    /Invalid events\(\) option "schedules\[0\]": expected a schedule/,
  );
  const badCron = application({ logger: quiet() }).use(events({
    autoScan: false,
    brokerPort: false,
    schedules: [schedule("bad.cron").options({ cron: "0 25 * * *" }).handle(() => {})],
  }));
  await assert.rejects(
    () => badCron.start(),
    /Invalid schedule option "cron" for schedule "bad.cron"/,
  );
  await badCron.stop();
  const badTransport = application({ logger: quiet() }).use(events({
    autoScan: false,
    brokerPort: false,
    schedules: [
      schedule("bad.transport").options({ cron: "* * * * *", transport: "redis" }).handle(() => {}),
    ],
  }));
  await assert.rejects(() => badTransport.start(), /"transport".*"redis" is not a key/);
  await badTransport.stop();
});
