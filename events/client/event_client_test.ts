import assert from "node:assert/strict";
import { application, http } from "@fw/application";
import { oauth } from "@fw/application/oauth";
import { Int, topic } from "@fw/events";
import { eventServer, type EventServerPlugin } from "@fw/events/server";
import { createLogger, Min } from "@fw/runtime";
import {
  type ClientState,
  eventClient,
  type EventClientError,
  isCompatibleEventServer,
  readDiscovery,
} from "../client.ts";
import { signJwt } from "../../application/testdata/jwt.ts";

const Orders = topic("orders.created", { n: Int }, { channel: "orders" });
const Quotes = topic("market.quote", { n: Int });
const Private = topic("private.notes", { n: Int });
const SECRET = "s".repeat(32);
const logger = createLogger({ level: "silent" });

async function start(): Promise<
  { stop(): Promise<void>; server: EventServerPlugin; base: string; ws: string }
> {
  const auth = oauth({ issuer: "https://id.test", audience: "events", secret: SECRET });
  const server = eventServer({
    topics: [Orders, Quotes, Private],
    verifyToken: auth.verify,
    access: (user, name, action) =>
      action === "publish" || name !== Private.name || user !== undefined,
  });
  const app = application({ logger })
    .use(http({ port: 0, hostname: "127.0.0.1", signals: false }))
    .use(auth)
    .use(server);
  await app.start();
  const base = `http://127.0.0.1:${app.address!.port}`;
  return { stop: () => app.stop(), server, base, ws: `${base.replace("http", "ws")}/events/ws` };
}

function jwt(): Promise<string> {
  const now = Math.floor(Date.now() / 1000);
  return signJwt({ iss: "https://id.test", aud: "events", sub: "ada", iat: now, exp: now + 600 }, {
    alg: "HS256",
    secret: SECRET,
  });
}

async function publish(base: string, name: string, payload: unknown): Promise<string> {
  const res = await fetch(`${base}/events/publish`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ id: crypto.randomUUID(), topic: name, payload }),
  });
  const body = await res.json();
  assert.equal(res.status, 200, JSON.stringify(body));
  return body.streamId;
}

async function until(what: string, check: () => boolean, timeoutMs = 5000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!check()) {
    if (Date.now() > deadline) throw new Error(`Timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 10));
  }
}

Deno.test("eventClient() follows several topics over one socket, validates payloads and unsubscribes", async () => {
  const s = await start();
  const client = eventClient({ url: s.ws, token: async () => `Bearer ${await jwt()}` });
  try {
    const got: string[] = [];
    const errors: string[] = [];
    const o = client.subscribe(Orders, (p, m) => got.push(`o${p.n}@${m.channel}`));
    const q = client.subscribe("market.quote", (p: { n: number }) => got.push(`q${p.n}`));
    // Stricter than the server's topic: the client refuses what its schema refuses.
    const strict = topic("private.notes", { n: Min(10, Int) });
    const p = client.subscribe(strict, (x) => got.push(`p${x.n}`), {
      onError: (e) => errors.push(`${e.code}: ${e.message}`),
    });
    await until("three subscriptions", () => [o, q, p].every((x) => x.state === "live"));
    assert.equal(s.server.connections, 1, "one socket");
    assert.equal(o.recovered, true);
    const id1 = await publish(s.base, Orders.name, { n: 1 });
    await publish(s.base, Quotes.name, { n: 2 });
    await publish(s.base, Private.name, { n: 3 });
    await publish(s.base, Private.name, { n: 30 });
    await until("four events", () => got.length === 3);
    assert.deepEqual(got.sort(), ["o1@orders", "p30", "q2"]);
    assert.equal(o.lastId, id1);
    assert.equal(errors.length, 1);
    assert.match(errors[0], /^invalid_payload: Invalid payload for topic "private.notes"/);
    o.unsubscribe();
    assert.equal(o.state, "closed");
    await publish(s.base, Orders.name, { n: 4 });
    await publish(s.base, Quotes.name, { n: 5 });
    await until("the quote", () => got.includes("q5"));
    assert.ok(!got.includes("o4@orders"), "no event after unsubscribe");
    assert.equal(client.discovery?.protocol, "fw.events.v1");
  } finally {
    client.close();
    await until("the socket to close", () => s.server.connections === 0);
    await s.stop();
  }
});

Deno.test("eventClient() reports a failing token function on the subscription and retries with back-off", async () => {
  const s = await start();
  const answers: (() => Promise<string | undefined>)[] = [
    () => Promise.reject(new Error("offline")),
    () => Promise.resolve(undefined),
    () => Promise.resolve("Bearer not-a-jwt"),
    async () => `Bearer ${await jwt()}`,
  ];
  let calls = 0;
  const delays: number[] = [];
  const subErrors: string[] = [];
  const clientErrors: string[] = [];
  const client = eventClient({
    url: s.ws,
    token: () => answers[Math.min(calls++, answers.length - 1)](),
    reconnect: { initialDelayMs: 20, maxDelayMs: 50 },
    random: () => 0.999,
    onRetry: ({ delayMs }) => delays.push(delayMs),
    onError: (e) => clientErrors.push(e.code),
  });
  try {
    const got: number[] = [];
    const sub = client.subscribe(Private, (p) => got.push(p.n), {
      onError: (e) => subErrors.push(`${e.code}: ${e.message}`),
    });
    await until("the subscription", () => sub.state === "live");
    assert.deepEqual(subErrors.map((e) => e.split(":")[0]), [
      "token_failed",
      "token_failed",
      "unauthorized",
    ]);
    assert.match(subErrors[0], /The token function failed: offline/);
    assert.match(subErrors[1], /returned undefined/);
    assert.deepEqual(delays, [19, 39, 49], "full-jitter ceilings 20, 40, 50 (capped)");
    assert.deepEqual(clientErrors, ["connection_lost"], "the refused hello closed the socket");
    assert.equal(calls, 4, "a fresh token per connection attempt");
    await publish(s.base, Private.name, { n: 7 });
    await until("the event", () => got.length === 1);
    assert.equal(client.state, "open");
  } finally {
    client.close();
    await until("the socket to close", () => s.server.connections === 0);
    await s.stop();
  }
});

Deno.test("eventClient() retries a discovery answered 503 by a load balancer, then subscribes", async () => {
  const s = await start();
  let calls = 0;
  const errors: string[] = [];
  const client = eventClient({
    url: s.ws,
    reconnect: { initialDelayMs: 10, maxDelayMs: 20 },
    // the balancer has no instance ready for the first two discovery requests
    fetch: (input, init) =>
      ++calls <= 2
        ? Promise.resolve(new Response("<h1>503 Service Unavailable</h1>", { status: 503 }))
        : fetch(input, init),
    onError: (e) => errors.push(`${e.code}: ${e.message}`),
  });
  try {
    const got: number[] = [];
    const sub = client.subscribe(Orders, (p) => got.push(p.n));
    await until("the subscription", () => sub.state === "live");
    assert.equal(errors.length, 2);
    assert.match(
      errors[0],
      /^connection_lost: The Event Server at ".*" is unavailable for now: status 503$/,
    );
    await publish(s.base, Orders.name, { n: 1 });
    await until("the event", () => got.length === 1);
    assert.equal(calls, 3);
  } finally {
    client.close();
    await until("the socket to close", () => s.server.connections === 0);
    await s.stop();
  }
});

Deno.test("eventClient() refuses a server that is not an fw Event Server", async () => {
  let requests = 0;
  const server = Deno.serve({ port: 0, hostname: "127.0.0.1", onListen() {} }, () => {
    requests++;
    return Response.json({ protocol: "socket.io", version: 4 });
  });
  const url = `ws://127.0.0.1:${server.addr.port}/events/ws`;
  try {
    assert.equal(await isCompatibleEventServer(url), false);
    await assert.rejects(
      readDiscovery(url),
      new RegExp(
        `^EventClientError: Not an fw Event Server at "http://127.0.0.1:${server.addr.port}/.well-known/fw/events": expected a discovery document with protocol "fw.events.v1", got protocol "socket.io"$`,
      ),
    );
    const states: ClientState[] = [];
    const errors: EventClientError[] = [];
    const client = eventClient({ url, onStateChange: (st) => states.push(st) });
    const sub = client.subscribe("orders.created", () => {}, { onError: (e) => errors.push(e) });
    await until("the refusal", () => sub.state === "closed");
    assert.equal(errors[0].code, "incompatible_server");
    assert.equal(client.state, "closed");
    assert.deepEqual(states, ["connecting", "closed"]);
    const before = requests;
    await new Promise((r) => setTimeout(r, 100));
    assert.equal(requests, before, "no reconnect");
    assert.throws(() => client.subscribe("a.b", () => {}), /the client is closed/);
    assert.throws(() => eventClient({ url: "http://x" }), /option "url": expected a ws:/);
  } finally {
    await server.shutdown();
  }
});

Deno.test("eventClient() reports frames it does not understand and callbacks that throw, and carries on", async () => {
  const closed = Promise.withResolvers<void>();
  const server = Deno.serve({ port: 0, hostname: "127.0.0.1", onListen() {} }, (req) => {
    const { socket, response } = Deno.upgradeWebSocket(req);
    socket.onclose = () => closed.resolve();
    socket.onmessage = (e) => {
      const f = JSON.parse(e.data);
      if (f.type === "hello") {
        socket.send(JSON.stringify({
          type: "welcome",
          protocol: "fw.events.v1",
          connection: "c1",
          authenticated: false,
          pingIntervalMs: 0,
        }));
      }
      if (f.type === "subscribe") {
        socket.send(
          JSON.stringify({ type: "subscribed", sub: f.sub, topic: f.topic, recovered: true }),
        );
        socket.send("not json");
        socket.send(JSON.stringify({ type: "mystery", sub: f.sub }));
        socket.send(
          JSON.stringify({ type: "event", sub: f.sub, topic: f.topic, payload: { n: 0 } }),
        );
        for (const n of [1, 2]) {
          socket.send(
            JSON.stringify({
              type: "event",
              sub: f.sub,
              topic: f.topic,
              id: `${n}`,
              payload: { n },
            }),
          );
        }
        socket.send(JSON.stringify({ type: "ping", id: "p1" }));
      }
      if (f.type === "pong") {
        socket.send(
          JSON.stringify({ type: "event", sub: "s1", topic: "a.b", id: "3", payload: { n: 3 } }),
        );
      }
    };
    return response;
  });
  const errors: string[] = [];
  const client = eventClient({
    url: `ws://127.0.0.1:${server.addr.port}/`,
    discovery: false,
    onError: (e) => errors.push(`client ${e.code}`),
  });
  try {
    const got: number[] = [];
    client.subscribe("a.b", (p: { n: number }) => {
      got.push(p.n);
      if (p.n === 1) throw new Error("boom");
    }, { onError: (e) => errors.push(`sub ${e.code}: ${e.message}`) });
    await until("three events", () => got.length === 3);
    assert.deepEqual(got, [1, 2, 3], "the pong was sent and later events still arrive");
    assert.deepEqual(errors, [
      "client invalid_frame",
      "client invalid_frame",
      "sub invalid_frame: The server sent an event without an id",
      "sub callback_failed: A callback threw: boom",
    ]);
  } finally {
    client.close();
    await closed.promise;
    await server.shutdown();
  }
});

Deno.test("eventClient() surfaces recovered false and gaps, and stops for good on close 4000", async () => {
  let upgrades = 0;
  const closed = Promise.withResolvers<void>();
  const server = Deno.serve({ port: 0, hostname: "127.0.0.1", onListen() {} }, (req) => {
    upgrades++;
    const { socket, response } = Deno.upgradeWebSocket(req);
    socket.onclose = () => closed.resolve();
    socket.onmessage = (e) => {
      const f = JSON.parse(e.data);
      if (f.type === "hello") {
        socket.send(JSON.stringify({
          type: "welcome",
          protocol: "fw.events.v1",
          connection: "c1",
          authenticated: false,
          pingIntervalMs: 0,
        }));
      } else if (f.type === "subscribe") {
        socket.send(
          JSON.stringify({ type: "subscribed", sub: f.sub, topic: f.topic, recovered: false }),
        );
        socket.send(JSON.stringify({
          type: "gap",
          sub: f.sub,
          topic: f.topic,
          after: f.from,
          reason: "disconnected",
        }));
        socket.close(4000, "unsupported protocol");
      }
    };
    return response;
  });
  const seen: string[] = [];
  const client = eventClient({ url: `ws://127.0.0.1:${server.addr.port}/`, discovery: false });
  try {
    const sub = client.subscribe("a.b", () => {}, {
      from: "41",
      onSubscribed: ({ recovered, resumed }) => seen.push(`subscribed ${recovered} ${resumed}`),
      onGap: ({ after, reason }) => seen.push(`gap ${after} ${reason}`),
      onError: (e) => seen.push(`error ${e.code}`),
    });
    await closed.promise;
    await until("the client to stop", () => client.state === "closed");
    assert.deepEqual(seen, [
      "subscribed false true",
      "gap 41 disconnected",
      "error incompatible_server",
    ]);
    assert.equal(sub.recovered, false);
    assert.equal(sub.state, "closed");
    await new Promise((r) => setTimeout(r, 100));
    assert.equal(upgrades, 1, "no reconnect after 4000");
  } finally {
    client.close();
    await server.shutdown();
  }
});
