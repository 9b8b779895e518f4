/**
 * eventServer() over real sockets (`application().use(http({ port: 0 }))`): multiplexed
 * subscriptions, resume with `recovered`, bad input from the invalid fixtures with the socket and
 * the server staying healthy, hello tokens and the access rule, slow consumers, ping time-outs,
 * shutdown and SSE (issue 14).
 */
import assert from "node:assert/strict";
import { application, http } from "@fw/application";
import { oauth } from "@fw/application/oauth";
import { Int, memoryRealtime, type RealtimeBroker, topic } from "@fw/events";
import { EVENTS_CLOSE_CODES } from "@fw/events/protocol";
import { eventServer, type EventServerOptions } from "@fw/events/server";
import { createLogger, ManualClock, MemorySink } from "@fw/runtime";
import { SseReader, WsSession } from "../events/protocol/_conformance_io.ts";
import { signJwt } from "../application/testdata/jwt.ts";
import { ConformanceEcho } from "../scripts/_conformance_app.ts";

const Orders = topic("orders.created", { n: Int }, { channel: "orders" });
const Quotes = topic("market.quote", { n: Int });
const Admin = topic("admin.notice", { n: Int });
const Big = topic("bulk.blob", { text: String });
const SECRET = "k".repeat(32);
const logger = createLogger({ level: "silent" });
const T = 3000;

async function start(options: Partial<EventServerOptions> = {}, realtime?: RealtimeBroker) {
  const auth = oauth({ issuer: "https://id.test", audience: "events", secret: SECRET });
  const server = eventServer({
    topics: [Orders, Quotes, Admin, Big, ConformanceEcho],
    access: (user, name) => name !== Admin.name || (user?.roles.includes("admin") ?? false),
    verifyToken: auth.verify,
    ...(realtime ? { realtime } : {}),
    ...options,
  });
  const app = application({ logger })
    .use(http({ port: 0, hostname: "127.0.0.1", signals: false }))
    .use(auth)
    .use(server);
  await app.start();
  const port = app.address!.port;
  return {
    app,
    server,
    base: `http://127.0.0.1:${port}`,
    ws: `ws://127.0.0.1:${port}/events/ws`,
  };
}

function token(claims: Record<string, unknown>): Promise<string> {
  const now = Math.floor(Date.now() / 1000);
  return signJwt(
    { iss: "https://id.test", aud: "events", iat: now, exp: now + 600, ...claims },
    { alg: "HS256", secret: SECRET },
  );
}

async function publish(
  base: string,
  topicName: string,
  payload: unknown,
  id = crypto.randomUUID(),
) {
  const res = await fetch(`${base}/events/publish`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ id, topic: topicName, payload }),
  });
  const body = await res.json();
  assert.equal(res.status, 200, JSON.stringify(body));
  return body.streamId as string;
}

async function frame(ws: WsSession, type: string): Promise<Record<string, unknown>> {
  const item = await ws.next(T, `"${type}"`);
  assert.ok("frame" in item, `expected "${type}", got close ${JSON.stringify(item)}`);
  assert.equal(item.frame.type, type, JSON.stringify(item.frame));
  return item.frame;
}

async function hello(ws: WsSession, tokenValue?: string): Promise<Record<string, unknown>> {
  ws.send(JSON.stringify({
    type: "hello",
    protocol: "fw.events.v1",
    ...(tokenValue ? { token: tokenValue } : {}),
  }));
  return await frame(ws, "welcome");
}

async function subscribe(ws: WsSession, sub: string, name: string, from?: string) {
  ws.send(JSON.stringify({ type: "subscribe", sub, topic: name, ...(from ? { from } : {}) }));
  return await frame(ws, "subscribed");
}

Deno.test("eventServer() WebSocket: subscriptions to several topics share one socket, and a reconnect resumes each with recovered true", async () => {
  const { app, base, ws: url } = await start();
  try {
    let ws = await WsSession.open(url, T);
    await hello(ws);
    await subscribe(ws, "o", Orders.name);
    await subscribe(ws, "q", Quotes.name);
    const o1 = await publish(base, Orders.name, { n: 1 });
    assert.deepEqual(await frame(ws, "event"), {
      type: "event",
      sub: "o",
      topic: "orders.created",
      channel: "orders",
      id: o1,
      payload: { n: 1 },
    });
    const q1 = await publish(base, Quotes.name, { n: 10 });
    assert.deepEqual(await frame(ws, "event"), {
      type: "event",
      sub: "q",
      topic: "market.quote",
      id: q1,
      payload: { n: 10 },
    });
    await ws.close();
    // Missed while disconnected.
    await publish(base, Orders.name, { n: 2 });
    await publish(base, Quotes.name, { n: 11 });
    ws = await WsSession.open(url, T);
    await hello(ws);
    assert.equal((await subscribe(ws, "o2", Orders.name, o1)).recovered, true);
    assert.deepEqual((await frame(ws, "event")).payload, { n: 2 });
    assert.equal((await subscribe(ws, "q2", Quotes.name, q1)).recovered, true);
    assert.deepEqual((await frame(ws, "event")).payload, { n: 11 });
    await publish(base, Orders.name, { n: 3 });
    const live = await frame(ws, "event");
    assert.equal(live.sub, "o2");
    assert.deepEqual(live.payload, { n: 3 });
    await ws.close();
  } finally {
    await app.stop();
  }
});

Deno.test("eventServer() WebSocket: resuming from an id that left the retained window gives recovered false, then live events", async () => {
  const realtime = memoryRealtime({ maxLen: 2 });
  const { app, base, ws: url } = await start({}, realtime);
  try {
    const first = await publish(base, Orders.name, { n: 1 });
    for (let n = 2; n <= 5; n++) await publish(base, Orders.name, { n });
    const ws = await WsSession.open(url, T);
    await hello(ws);
    assert.equal((await subscribe(ws, "o", Orders.name, first)).recovered, false);
    await publish(base, Orders.name, { n: 6 });
    assert.deepEqual((await frame(ws, "event")).payload, { n: 6 });
    await ws.close();
  } finally {
    await app.stop();
    await realtime.close();
  }
});

Deno.test("eventServer() WebSocket: every invalid client fixture gets its error frame; the socket's subscription and the server stay healthy", async () => {
  const { app, base, ws: url } = await start();
  const dir = new URL("../events/protocol/fixtures/invalid/", import.meta.url);
  try {
    const ws = await WsSession.open(url, T);
    await hello(ws);
    await subscribe(ws, "keep", Orders.name);
    let count = 0;
    for await (const entry of Deno.readDir(dir)) {
      const f = JSON.parse(await Deno.readTextFile(new URL(entry.name, dir)));
      if (f.error === undefined) continue;
      count++;
      ws.send(f.text ?? JSON.stringify(f.frame));
      const error = await frame(ws, "error");
      assert.equal(error.code, f.error, `${entry.name}: ${JSON.stringify(error)}`);
      assert.equal(typeof error.message, "string");
    }
    assert.ok(count >= 15);
    ws.send(JSON.stringify({ type: "ping", pad: "x".repeat(70_000) }));
    assert.equal((await frame(ws, "error")).code, "frame_too_large");
    ws.send(new Uint8Array([0, 1]));
    assert.equal((await frame(ws, "error")).code, "binary_not_supported");
    await publish(base, Orders.name, { n: 42 });
    const event = await frame(ws, "event");
    assert.equal(event.sub, "keep");
    assert.deepEqual(event.payload, { n: 42 });
    const other = await WsSession.open(url, T);
    await hello(other);
    await other.close();
    await ws.close();
  } finally {
    await app.stop();
  }
});

Deno.test("eventServer() WebSocket: hello tokens are verified by oauth(), and the access rule answers forbidden or unauthorized frames", async () => {
  const { app, ws: url } = await start();
  try {
    const anon = await WsSession.open(url, T);
    assert.equal((await hello(anon)).authenticated, false);
    anon.send(JSON.stringify({ type: "subscribe", sub: "a", topic: Admin.name }));
    assert.deepEqual(await frame(anon, "error"), {
      type: "error",
      code: "unauthorized",
      message: 'Subscribing to topic "admin.notice" needs an authenticated user',
      sub: "a",
      frame: "subscribe",
    });
    // A refreshed token in a second hello upgrades the same connection.
    const user = await token({ sub: "u1", roles: ["user"] });
    assert.equal((await hello(anon, `Bearer ${user}`)).authenticated, true);
    anon.send(JSON.stringify({ type: "subscribe", sub: "a", topic: Admin.name }));
    assert.equal((await frame(anon, "error")).code, "forbidden");
    const admin = await token({ sub: "a1", roles: ["admin"] });
    assert.equal((await hello(anon, admin)).authenticated, true);
    assert.equal((await subscribe(anon, "a", Admin.name)).recovered, true);
    await anon.close();

    // The upgrade request's own bearer token (non-browser clients).
    const headerWs = new WebSocket(url, { headers: { authorization: `Bearer ${admin}` } } as never);
    const welcome = await new Promise<Record<string, unknown>>((resolve) => {
      headerWs.onopen = () =>
        headerWs.send(JSON.stringify({ type: "hello", protocol: "fw.events.v1" }));
      headerWs.onmessage = (e) => resolve(JSON.parse(e.data));
    });
    assert.equal(welcome.authenticated, true);
    const closed = new Promise((r) => headerWs.onclose = r);
    headerWs.close();
    await closed;

    const bad = await WsSession.open(url, T);
    bad.send(JSON.stringify({ type: "hello", protocol: "fw.events.v1", token: "Bearer nope" }));
    assert.equal((await frame(bad, "error")).code, "unauthorized");
    const close = await bad.next(T, "close");
    assert.ok("close" in close && close.close.code === EVENTS_CLOSE_CODES.unauthorized);
    await bad.close();
  } finally {
    await app.stop();
  }
});

/** A WebSocket client over raw TCP that can stop reading. */
async function rawClient(port: number) {
  const conn = await Deno.connect({ hostname: "127.0.0.1", port });
  await conn.write(new TextEncoder().encode(
    "GET /events/ws HTTP/1.1\r\nHost: 127.0.0.1\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n" +
      "Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n\r\n",
  ));
  const send = (text: string) => {
    const payload = new TextEncoder().encode(text);
    assert.ok(payload.length < 126);
    const frame = new Uint8Array(6 + payload.length);
    frame[0] = 0x81;
    frame[1] = 0x80 | payload.length; // masked, key 0: payload as is
    frame.set(payload, 6);
    return conn.write(frame);
  };
  return { conn, send };
}

/** Reads until a close frame and returns its code. */
async function readCloseCode(conn: Deno.TcpConn): Promise<number | undefined> {
  let data = new Uint8Array(0);
  const buf = new Uint8Array(256 * 1024);
  let pos = -1;
  for (;;) {
    const n = await conn.read(buf);
    if (n === null) return undefined;
    const next = new Uint8Array(data.length + n);
    next.set(data);
    next.set(buf.subarray(0, n), data.length);
    data = next;
    if (pos < 0) {
      const text = new TextDecoder().decode(data.subarray(0, Math.min(data.length, 1024)));
      const end = text.indexOf("\r\n\r\n");
      if (end < 0) continue;
      pos = end + 4;
    }
    for (;;) {
      if (data.length - pos < 2) break;
      const op = data[pos] & 0x0f;
      let len = data[pos + 1] & 0x7f, head = 2;
      if (len === 126) {
        if (data.length - pos < 4) break;
        len = (data[pos + 2] << 8) | data[pos + 3];
        head = 4;
      } else if (len === 127) {
        if (data.length - pos < 10) break;
        len = 0;
        for (let i = 2; i < 10; i++) len = len * 256 + data[pos + i];
        head = 10;
      }
      if (data.length - pos < head + len) break;
      if (op === 8) return (data[pos + head] << 8) | data[pos + head + 1];
      pos += head + len;
    }
    data = data.slice(pos);
    pos = 0;
  }
}

Deno.test("eventServer() WebSocket: a client that stops reading is closed as a slow consumer (4008) without stopping others", async () => {
  const realtime = memoryRealtime({ maxLen: 4 });
  const { app, server, base, ws: url } = await start({ maxBufferedBytes: 64 * 1024 }, realtime);
  const { conn, send } = await rawClient(app.address!.port);
  try {
    await send(JSON.stringify({ type: "hello", protocol: "fw.events.v1" }));
    await send(JSON.stringify({ type: "subscribe", sub: "s", topic: Big.name }));
    const healthy = await WsSession.open(url, T);
    await hello(healthy);
    await subscribe(healthy, "h", Orders.name);
    while (server.connections < 2) await new Promise((r) => setTimeout(r, 5));
    await new Promise((r) => setTimeout(r, 50));
    const text = "x".repeat(256 * 1024);
    let sent = 0;
    while (server.connections > 1 && sent < 2000) {
      await publish(base, Big.name, { text });
      sent++;
    }
    assert.equal(server.connections, 1, `still connected after ${sent} messages`);
    assert.equal(await readCloseCode(conn), EVENTS_CLOSE_CODES.slowConsumer);
    await publish(base, Orders.name, { n: 1 });
    assert.deepEqual((await frame(healthy, "event")).payload, { n: 1 });
    await healthy.close();
  } finally {
    conn.close();
    await app.stop();
    await realtime.close();
  }
});

Deno.test("eventServer() WebSocket: a client silent for two ping intervals is closed with 4002", async () => {
  const clock = new ManualClock(1_000_000);
  const { app, ws: url } = await start({ clock, pingIntervalMs: 1000 });
  try {
    const ws = new WebSocket(url);
    const frames: Record<string, unknown>[] = [];
    const closed = new Promise<CloseEvent>((r) => ws.onclose = r);
    ws.onmessage = (e) => frames.push(JSON.parse(e.data));
    await new Promise((r) => ws.onopen = r);
    ws.send(JSON.stringify({ type: "hello", protocol: "fw.events.v1" }));
    while (frames.length < 1) await new Promise((r) => setTimeout(r, 5));
    assert.equal(frames[0].pingIntervalMs, 1000);
    await clock.advance(1000);
    while (frames.length < 2) await new Promise((r) => setTimeout(r, 5));
    assert.deepEqual(frames[1], { type: "ping" });
    await clock.advance(1000);
    assert.equal((await closed).code, EVENTS_CLOSE_CODES.pingTimeout);
  } finally {
    await app.stop();
  }
});

Deno.test("eventServer() stop closes WebSockets with 1001 and ends SSE streams", async () => {
  const { app, server, base, ws: url } = await start();
  const ws = await WsSession.open(url, T);
  await hello(ws);
  const res = await fetch(`${base}/events/sse/${Orders.name}`, {
    headers: { accept: "text/event-stream" },
  });
  const reader = new SseReader(res.body!);
  assert.equal((await reader.next())?.event, "subscribed");
  assert.equal(server.connections, 2);
  await app.stop();
  const item = await ws.next(T, "close");
  assert.ok("close" in item && item.close.code === EVENTS_CLOSE_CODES.goingAway);
  assert.equal(await reader.next(), undefined);
  await ws.close();
});

Deno.test("eventServer() behind http({ health }): connections stay up during the drain delay, then close before the listener drains", async () => {
  const clock = new ManualClock(1_000);
  const sink = new MemorySink();
  const app = application({ logger: createLogger({ level: "debug", sink }), clock })
    .use(http({ port: 0, hostname: "127.0.0.1", signals: false, health: { drainDelayMs: 2_000 } }))
    .use(eventServer({ topics: [Orders] }));
  await app.start();
  const base = `http://127.0.0.1:${app.address!.port}`;
  const ws = await WsSession.open(`${base.replace("http", "ws")}/events/ws`, T);
  await hello(ws);
  const res = await fetch(`${base}/events/sse/${Orders.name}`, {
    headers: { accept: "text/event-stream" },
  });
  const reader = new SseReader(res.body!);
  assert.equal((await reader.next())?.event, "subscribed");
  const stopped = app.stop();
  await clock.advance(1_999);
  const ready = await fetch(`${base}/readyz`);
  assert.equal(ready.status, 503);
  await ready.body?.cancel();
  // still serving: a publish during the delay reaches the open SSE stream
  await publish(base, Orders.name, { n: 1 });
  assert.deepEqual(JSON.parse((await reader.next())!.data).payload, { n: 1 });
  await clock.advance(1);
  await stopped;
  const item = await ws.next(T, "close");
  assert.ok("close" in item);
  assert.deepEqual([item.close.code, item.close.reason], [
    EVENTS_CLOSE_CODES.goingAway,
    "server stopping",
  ]);
  assert.equal(await reader.next(), undefined);
  // the listener did not wait for the SSE stream until shutdownTimeoutMs
  assert.equal(sink.records.filter((r) => /shutdownTimeoutMs/.test(r.message)).length, 0);
  await ws.close();
});

Deno.test("eventServer() SSE: ?from= resumes a first connection, events carry the stream id and channel, Last-Event-ID wins", async () => {
  const { app, base } = await start();
  try {
    const first = await publish(base, Orders.name, { n: 1 });
    const second = await publish(base, Orders.name, { n: 2 });
    const third = await publish(base, Orders.name, { n: 3 });
    const res = await fetch(`${base}/events/sse/${Orders.name}?from=${first}`, {
      headers: { accept: "text/event-stream", "last-event-id": second },
    });
    assert.equal(res.headers.get("content-type"), "text/event-stream; charset=utf-8");
    const reader = new SseReader(res.body!);
    assert.deepEqual(await reader.next(), {
      event: "subscribed",
      id: undefined,
      data: '{"topic":"orders.created","recovered":true}',
    });
    const event = await reader.next();
    assert.equal(event?.id, third);
    assert.deepEqual(JSON.parse(event!.data), {
      topic: "orders.created",
      channel: "orders",
      id: third,
      payload: { n: 3 },
    });
    await reader.cancel();
    const noAccept = await fetch(`${base}/events/sse/${Orders.name}`, {
      headers: { accept: "application/json" },
    });
    assert.equal(noAccept.status, 406);
    assert.equal((await noAccept.json()).code, "not_acceptable");
  } finally {
    await app.stop();
  }
});

Deno.test("eventServer() WebSocket: a gap reported by the broker mid-subscription becomes a gap frame; maxSubscriptions is enforced; a broker failure is an internal error frame", async () => {
  const inner = memoryRealtime();
  const gaps:
    ((gap: { topic: string; after: string; reason: "trimmed" | "disconnected" }) => void)[] = [];
  const realtime: RealtimeBroker = {
    name: "gappy",
    capabilities: inner.capabilities,
    publish: (t, p) => inner.publish(t, p),
    subscribe: (t, cb, o) => {
      if (t === Big.name) return Promise.reject(new Error("store down"));
      if (o?.onGap) gaps.push(o.onGap);
      return inner.subscribe(t, cb, o);
    },
    close: () => inner.close(),
  };
  const { app, ws: url } = await start({ maxSubscriptions: 2 }, realtime);
  try {
    const ws = await WsSession.open(url, T);
    await hello(ws);
    await subscribe(ws, "a", Orders.name);
    await subscribe(ws, "b", Quotes.name);
    ws.send(JSON.stringify({ type: "subscribe", sub: "c", topic: Orders.name }));
    assert.equal((await frame(ws, "error")).code, "too_many_subscriptions");
    gaps[0]({ topic: Orders.name, after: "1-7", reason: "disconnected" });
    assert.deepEqual(await frame(ws, "gap"), {
      type: "gap",
      sub: "a",
      topic: Orders.name,
      after: "1-7",
      reason: "disconnected",
    });
    ws.send(JSON.stringify({ type: "unsubscribe", sub: "b" }));
    await frame(ws, "unsubscribed");
    ws.send(JSON.stringify({ type: "subscribe", sub: "big", topic: Big.name }));
    assert.deepEqual(await frame(ws, "error"), {
      type: "error",
      code: "internal",
      message: 'Cannot subscribe to topic "bulk.blob" now',
      sub: "big",
      frame: "subscribe",
    });
    ws.send(JSON.stringify({ type: "unsubscribe", sub: "a" }));
    await frame(ws, "unsubscribed");
    await subscribe(ws, "c", Orders.name);
    await subscribe(ws, "d", Orders.name);
    await ws.close();
  } finally {
    await app.stop();
    await inner.close();
  }
});

Deno.test("eventServer() SSE: a client that stops reading gets a slow_consumer error event and the stream ends", async () => {
  const realtime = memoryRealtime({ maxLen: 4 });
  const { app, server, base } = await start({ maxBufferedBytes: 64 * 1024 }, realtime);
  try {
    const res = await fetch(`${base}/events/sse/${Big.name}`, {
      headers: { accept: "text/event-stream" },
    });
    const reader = new SseReader(res.body!);
    assert.equal((await reader.next())?.event, "subscribed");
    const text = "x".repeat(256 * 1024);
    let sent = 0;
    while (server.connections > 0 && sent < 2000) {
      await publish(base, Big.name, { text });
      sent++;
    }
    assert.equal(server.connections, 0, `still streaming after ${sent} messages`);
    let last: { event: string; data: string } | undefined;
    for (let e = await reader.next(); e; e = await reader.next()) last = e;
    assert.equal(last?.event, "error");
    assert.equal(JSON.parse(last!.data).code, "slow_consumer");
  } finally {
    await app.stop();
    await realtime.close();
  }
});
