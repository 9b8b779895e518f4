import assert from "node:assert/strict";
import { application, http } from "@fw/application";
import { oauth } from "@fw/application/oauth";
import {
  type Envelope,
  type EventContext,
  events,
  EventServerPublishError,
  eventServerTransport,
  type EventServerTransportOptions,
  getPublisher,
  handler,
  type HandlerDefinition,
  Int,
  memoryRealtime,
  newTraceId,
  topic,
  useContext,
} from "@fw/events";
import { eventServer } from "@fw/events/server";
import { createLogger } from "@fw/runtime";
import { signJwt } from "../../../application/testdata/jwt.ts";

const Orders = topic("shop.orders", { n: Int }, { version: "1" });
const Broken = topic("shop.broken", { n: Int }, { version: "1" });
const Notes = topic("shop.notes", { n: Int });
const SECRET = "e".repeat(32);
const logger = createLogger({ level: "silent" });

interface Seen {
  n: number;
  traceId: string;
  contextTraceId: string;
  sub?: string;
}

/** A real Event Server app whose `events()` handler records what it sees. */
async function startServer(gate?: Promise<void>) {
  const auth = oauth({ issuer: "https://id.test", audience: "events", secret: SECRET });
  const seen: Seen[] = [];
  const realtime = memoryRealtime({ logger });
  const publishRealtime = realtime.publish.bind(realtime);
  // The broker behind shop.broken fails after the hand-off: the server answers 500 (ambiguous).
  realtime.publish = (t, payload) =>
    (typeof t === "string" ? t : t.name) === Broken.name
      ? Promise.reject(new Error("broker connection lost"))
      : publishRealtime(t, payload);
  const bus = events({
    autoScan: false,
    brokerPort: false,
    handlers: [
      handler(Orders).options({ concurrency: 1, queueLimit: 1 }).handle(async (msg) => {
        seen.push({
          n: msg.payload.n,
          traceId: msg.traceId,
          contextTraceId: useContext<EventContext>().traceId,
          ...(msg.attributes["auth.sub"] ? { sub: msg.attributes["auth.sub"] } : {}),
        });
        if (gate) await gate;
      }),
    ],
  });
  const app = application({ logger })
    .use(http({ port: 0, hostname: "127.0.0.1", signals: false }))
    .use(auth)
    .use(bus)
    .use(eventServer({
      topics: [Orders, Broken, Notes],
      realtime,
      verifyToken: auth.verify,
      access: (user, _t, action) => action === "subscribe" || user !== undefined,
    }));
  await app.start();
  return {
    seen,
    bus: bus.bus!,
    origin: `http://127.0.0.1:${app.address!.port}`,
    async stop() {
      await app.stop();
      await realtime.close();
    },
  };
}

function jwt(): Promise<string> {
  const now = Math.floor(Date.now() / 1000);
  return signJwt(
    { iss: "https://id.test", aud: "events", sub: "billing", iat: now, exp: now + 600 },
    { alg: "HS256", secret: SECRET },
  );
}

function envelope(t: { name: string; version?: string }, payload: unknown): Envelope {
  return {
    id: crypto.randomUUID(),
    topic: t.name,
    payload,
    attributes: { source: "test" },
    traceId: newTraceId(),
    ...(t.version ? { version: t.version } : {}),
    publishedAt: Date.now(),
  };
}

async function until(what: string, check: () => boolean): Promise<void> {
  const deadline = Date.now() + 5000;
  while (!check()) {
    if (Date.now() > deadline) throw new Error(`Timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 10));
  }
}

function options(origin: string, more: Partial<EventServerTransportOptions> = {}) {
  return {
    origin,
    audience: "events",
    contractVersion: "1",
    tokenSource: () => jwt(),
    sleep: () => Promise.resolve(),
    ...more,
  };
}

Deno.test('events({ transport: "eventserver" }) publishes with the token and traceparent; the handler\'s context has the trace id', async () => {
  const server = await startServer();
  const audiences: string[] = [];
  const plugin = events({
    autoScan: false,
    brokerPort: false,
    transport: "eventserver",
    eventServer: {
      origin: server.origin,
      audience: "events",
      contractVersion: "1",
      tokenSource: (audience) => (audiences.push(audience), jwt()),
    },
  });
  const app = application({ logger }).use(plugin);
  await app.start();
  // The Event Server forwards to its own application's events() bus; publish on the client
  // app's bus explicitly, as both apps share this process.
  try {
    const traceId = newTraceId();
    const sent = await getPublisher(Orders, { bus: plugin.bus! })({ n: 1 }, { traceId });
    assert.equal(sent.traceId, traceId);
    await until("the handler", () => server.seen.length === 1);
    assert.deepEqual(server.seen, [{ n: 1, traceId, contextTraceId: traceId, sub: "billing" }]);
    assert.deepEqual(audiences, ["events"]);
    await assert.rejects(
      getPublisher(Notes, { bus: plugin.bus! })({ n: 2 }),
      /^TypeError: Cannot publish topic "shop.notes" through the Event Server: managed topics need a version/,
    );
  } finally {
    await app.stop();
    await server.stop();
  }
});

Deno.test("eventServerTransport() retries a publish whose answer was lost with the same bytes; the server accepts it once", async () => {
  const server = await startServer();
  const bodies: string[] = [];
  const traceparents: string[] = [];
  const transport = eventServerTransport(options(server.origin, {
    fetch: async (input, init) => {
      const res = await fetch(input, init);
      if (init?.method !== "POST") return res;
      bodies.push(String(init.body));
      traceparents.push(new Headers(init.headers).get("traceparent")!);
      if (bodies.length === 1) {
        await res.body?.cancel(); // the server handled it; the answer is lost on the way back
        throw new TypeError("connection reset by peer");
      }
      return res;
    },
  }));
  try {
    const first = envelope(Orders, { n: 1 });
    await transport.publish(first);
    assert.equal(bodies.length, 2, "one retry");
    assert.equal(bodies[0], bodies[1], "byte-identical");
    assert.equal(JSON.parse(bodies[0]).id, first.id);
    assert.equal(traceparents[0], traceparents[1]);
    assert.match(traceparents[0], new RegExp(`^00-${first.traceId}-[0-9a-f]{16}-01$`));
    await transport.publish(envelope(Orders, { n: 2 }));
    await until("both messages", () => server.seen.length === 2);
    assert.deepEqual(server.seen.map((s) => s.n), [1, 2], "message 1 handled once");
  } finally {
    await transport.close();
    await server.stop();
  }
});

Deno.test("eventServerTransport() types each failure: permanent, retryable and ambiguous", async () => {
  const gate = Promise.withResolvers<void>();
  const server = await startServer(gate.promise);
  const statuses: (number | string)[] = [];
  const recording = (more: Partial<EventServerTransportOptions> = {}) =>
    eventServerTransport(options(server.origin, {
      fetch: async (input, init) => {
        try {
          const res = await fetch(input, init);
          if (init?.method === "POST") statuses.push(res.status);
          return res;
        } catch (error) {
          statuses.push("network");
          throw error;
        }
      },
      ...more,
    }));
  let stopped = false;
  try {
    // Permanent: the server refuses the payload; one request, no retry.
    const t = recording();
    let e: EventServerPublishError = await failure(t, envelope(Orders, { n: "x" }));
    assert.deepEqual([e.outcome, e.status, e.code, e.attempts], [
      "permanent",
      400,
      "invalid_payload",
      1,
    ]);
    // Permanent: a token the server does not accept.
    e = await failure(recording({ tokenSource: () => "not-a-jwt" }), envelope(Orders, { n: 1 }));
    assert.deepEqual([e.outcome, e.status, e.code], ["permanent", 401, "unauthorized"]);

    // Retryable: the handler queue is full (one running, one waiting): 503, nothing published.
    await t.publish(envelope(Orders, { n: 10 }));
    await until("the first handler call", () => server.seen.length === 1);
    await t.publish(envelope(Orders, { n: 11 }));
    statuses.length = 0;
    e = await failure(recording({ maxAttempts: 2 }), envelope(Orders, { n: 12 }));
    assert.deepEqual([e.outcome, e.status, e.code, e.attempts], [
      "retryable",
      503,
      "unavailable",
      2,
    ]);
    // ... and a retry after the queue drained is accepted.
    statuses.length = 0;
    const waits: number[] = [];
    await recording({
      sleep: (ms) => {
        waits.push(ms);
        gate.resolve();
        return until("the queue to drain", () => server.seen.length === 2);
      },
    }).publish(envelope(Orders, { n: 13 }));
    assert.deepEqual(statuses, [503, 200]);
    assert.deepEqual(waits, [1000], "the server's retryAfterMs");

    // Ambiguous: the broker failed after the hand-off (500), retried, still failing.
    statuses.length = 0;
    e = await failure(recording({ maxAttempts: 3 }), envelope(Broken, { n: 1 }));
    assert.deepEqual([e.outcome, e.status, e.code, e.attempts], ["ambiguous", 500, "internal", 3]);
    assert.deepEqual(statuses, [500, 500, 500]);
    // Ambiguous: no answer at all (the server is gone).
    const gone = recording({ maxAttempts: 2 });
    await gone.ready();
    await server.stop();
    stopped = true;
    e = await failure(gone, envelope(Orders, { n: 1 }));
    assert.deepEqual([e.outcome, e.status, e.code, e.attempts], [
      "ambiguous",
      undefined,
      "network",
      2,
    ]);
  } finally {
    gate.resolve();
    if (!stopped) await server.stop();
  }
});

/** Publishes and returns the EventServerPublishError it must throw. */
async function failure(
  t: ReturnType<typeof eventServerTransport>,
  e: Envelope,
): Promise<EventServerPublishError> {
  try {
    await t.publish(e);
  } catch (error) {
    if (error instanceof EventServerPublishError) return error;
    throw new Error(`unexpected ${error}`);
  }
  throw new Error("the publish succeeded");
}

Deno.test("eventServerTransport() fails at start-up on a contract version mismatch, a handler, or another server", async () => {
  const server = await startServer();
  const other = Deno.serve(
    { port: 0, hostname: "127.0.0.1", onListen() {} },
    () => Response.json({ protocol: "nope" }),
  );
  try {
    const start = (eventServer: EventServerTransportOptions, handlers: HandlerDefinition[] = []) =>
      application({ logger }).use(events({
        autoScan: false,
        brokerPort: false,
        transport: "eventserver",
        eventServer,
        handlers,
      })).start();
    await assert.rejects(
      start(options(server.origin, { contractVersion: "2" })),
      new RegExp(
        `^Error: Contract version mismatch with the Event Server at "${server.origin}": topic "shop.orders" is version "1", the transport is bound to "2"$`,
      ),
    );
    await assert.rejects(
      start(options(`http://127.0.0.1:${other.addr.port}`)),
      /^Error: Not an fw Event Server with HTTP publish at "http:\/\/127.0.0.1:\d+\/.well-known\/fw\/events"/,
    );
    await assert.rejects(
      start(options(server.origin), [
        handler(Orders).options({ group: "billing" }).handle(() => {}),
      ]),
      /^Error: Cannot subscribe handler "billing" to topic "shop.orders": the eventserver transport is publish-only/,
    );
    assert.throws(
      () => events({ transport: "eventserver" }),
      /transport "eventserver" needs "eventServer": \{ origin, audience, contractVersion, tokenSource \}/,
    );
    assert.throws(
      () => eventServerTransport({ origin: "ftp://x", audience: "a", contractVersion: "1" }),
      /^TypeError: Invalid eventServerTransport\(\) option "origin"/,
    );
  } finally {
    await other.shutdown();
    await server.stop();
  }
});
