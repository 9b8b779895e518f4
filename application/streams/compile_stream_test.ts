import assert from "node:assert/strict";
import {
  type Container,
  createLogger,
  Int,
  ManualClock,
  MemorySink,
  Min,
  NotFoundException,
  provider,
  Stream,
  useContext,
} from "@fw/runtime";
import { api } from "../api.ts";
import { type Application, application } from "../application.ts";
import { endpoint } from "../endpoint.ts";
import type { EndpointDefinition } from "../endpoint_types.ts";
import { http } from "../http.ts";
import type { StreamOptions } from "./options.ts";
import { SseReader, until, WsClient } from "../testdata/stream_clients.ts";

interface Running {
  app: Application;
  sink: MemorySink;
  url: string;
  ws: string;
  sse(path: string, headers?: HeadersInit): Promise<SseReader>;
  errors(): string[];
}

async function start(
  routes: Record<string, EndpointDefinition>,
  options: { streams?: StreamOptions; clock?: ManualClock; container?: Container } = {},
): Promise<Running> {
  const sink = new MemorySink();
  const plugin = api({ autoScan: false, streams: options.streams });
  for (const [path, def] of Object.entries(routes)) plugin.route("GET", path, def);
  const app = application({
    logger: createLogger({ level: "debug", sink }),
    clock: options.clock,
    container: options.container,
  }).use(http({ port: 0, hostname: "127.0.0.1", signals: false })).use(plugin);
  await app.start();
  const url = app.address!.url;
  return {
    app,
    sink,
    url,
    ws: url.replace(/^http/, "ws"),
    async sse(path, headers) {
      const res = await fetch(url + path, { headers: { accept: "text/event-stream", ...headers } });
      assert.equal(res.status, 200);
      assert.equal(res.headers.get("content-type"), "text/event-stream; charset=utf-8");
      return new SseReader(res);
    },
    errors: () => sink.records.filter((r) => r.level === "error").map((r) => r.message),
  };
}

const Tick = { n: Int };

const ticks = endpoint()
  .params({ count: Min(0, Int) })
  .returns(Stream(Tick))
  .handle(async (ctx) => {
    for (let n = 1; n <= ctx.params.count; n++) await ctx.send({ n });
  });

Deno.test("server stream over SSE: validated params, numbered events, end of stream", async () => {
  const t = await start({ "/ticks/:count": ticks });
  const reader = await t.sse("/ticks/3");
  const events = [];
  for (let e = await reader.nextEvent(); e; e = await reader.nextEvent()) events.push(e);
  assert.deepEqual(events, [
    { id: "1", data: '{"n":1}' },
    { id: "2", data: '{"n":2}' },
    { id: "3", data: '{"n":3}' },
  ]);
  await t.app.stop();
});

Deno.test("stream handlers see the request's context after awaiting, whatever they return", async () => {
  const traceId = "4bf92f3577b34da6a3ce929d0e0e4736";
  const Id = { id: String };
  const seen = () => ({ id: useContext<{ traceId: string }>().traceId });
  const t = await start({
    "/async": endpoint().returns(Stream(Id)).handle(async (ctx) => {
      await new Promise((r) => setTimeout(r, 1));
      await ctx.send(seen());
    }),
    "/generator": endpoint().returns(Stream(Id)).handle(async function* () {
      await new Promise((r) => setTimeout(r, 1));
      yield seen();
    }),
    "/plain": endpoint().returns(Stream(Id)).handle(() => ({
      async *[Symbol.asyncIterator]() {
        await new Promise((r) => setTimeout(r, 1));
        yield seen();
      },
    })),
  });
  const traceparent = `00-${traceId}-00f067aa0ba902b7-01`;
  for (const path of ["/async", "/generator", "/plain"]) {
    const reader = await t.sse(path, { traceparent });
    assert.deepEqual(await reader.nextEvent(), { id: "1", data: JSON.stringify({ id: traceId }) });
    assert.equal(await reader.nextEvent(), undefined);
  }
  await t.app.stop();
});

Deno.test("server stream over a WebSocket: JSON messages, then close 1000", async () => {
  const t = await start({ "/ticks/:count": ticks });
  const client = await WsClient.connect(`${t.ws}/ticks/2`);
  assert.deepEqual(await client.rest(), {
    messages: [{ n: 1 }, { n: 2 }],
    code: 1000,
    reason: "",
  });
  await t.app.stop();
});

Deno.test("server stream answers 400 before streaming: no Accept or Upgrade, bad params", async () => {
  const t = await start({ "/ticks/:count": ticks });
  const plain = await fetch(`${t.url}/ticks/2`);
  assert.equal(plain.status, 400);
  assert.deepEqual(await plain.json(), {
    statusCode: 400,
    message:
      'Stream endpoint "GET /ticks/:count" needs "Accept: text/event-stream" or a WebSocket upgrade',
    error: "Bad Request",
  });
  const bad = await fetch(`${t.url}/ticks/-1`, { headers: { accept: "text/event-stream" } });
  assert.equal(bad.status, 400);
  assert.equal(bad.headers.get("content-type"), "application/json");
  assert.deepEqual(await bad.json(), {
    message: "params.count must be >= 0",
    errors: [{ field: "params.count", message: "params.count must be >= 0" }],
  });
  await assert.rejects(WsClient.connect(`${t.ws}/ticks/x`), /WebSocket failed/);
  await t.app.stop();
});

Deno.test("server stream exposes Last-Event-ID and continues the ids after it", async () => {
  const seen: (string | undefined)[] = [];
  const feed = endpoint().returns(Stream(Tick)).handle(async (ctx) => {
    seen.push(ctx.lastEventId);
    const from = Number(ctx.lastEventId ?? 0);
    for (let n = from + 1; n <= from + 2; n++) await ctx.send({ n });
  });
  const t = await start({ "/feed": feed });
  const first = await t.sse("/feed");
  assert.deepEqual([await first.nextEvent(), await first.nextEvent()], [
    { id: "1", data: '{"n":1}' },
    { id: "2", data: '{"n":2}' },
  ]);
  await first.cancel();
  const resumed = await t.sse("/feed", { "last-event-id": "2" });
  assert.deepEqual([await resumed.nextEvent(), await resumed.nextEvent()], [
    { id: "3", data: '{"n":3}' },
    { id: "4", data: '{"n":4}' },
  ]);
  assert.deepEqual(seen, [undefined, "2"]);
  await resumed.cancel();
  await t.app.stop();
});

Deno.test("server stream sends heartbeats on the application clock", async () => {
  const clock = new ManualClock(0);
  let stop!: () => void;
  const stopped = new Promise<void>((r) => stop = r);
  const quiet = endpoint().returns(Stream(Tick)).handle(async (ctx) => {
    await ctx.send({ n: 0 });
    await new Promise<void>((resolve) => ctx.signal.addEventListener("abort", () => resolve()));
    stop();
  });
  const t = await start({ "/quiet": quiet }, { clock, streams: { heartbeatMs: 5000 } });
  const reader = await t.sse("/quiet");
  assert.deepEqual(await reader.next(), { id: "1", data: '{"n":0}' });
  await clock.advance(5000);
  assert.deepEqual(await reader.next(), { comment: "ping" });
  await clock.advance(5000);
  assert.deepEqual(await reader.next(), { comment: "ping" });
  await reader.cancel();
  await stopped;
  assert.equal(clock.pending, 0, "no timer left once the client is gone");
  await t.app.stop();
});

Deno.test("a disconnect aborts ctx.signal, ends the handler quietly and disposes its scope", async () => {
  const disposed: string[] = [];
  const Db = provider({
    name: "Db",
    lifetime: "scoped",
    factory: () => ({ id: "db" }),
    dispose: (db) => void disposed.push(db.id),
  });
  let sent = 0;
  let ended: string | undefined;
  const firehose = endpoint().returns(Stream(Tick)).inject({ db: Db }).handle(
    async (_deps, ctx) => {
      try {
        for (;;) await ctx.send({ n: ++sent });
      } finally {
        ended = ctx.signal.aborted ? "aborted" : "finished";
      }
    },
  );
  const t = await start({ "/firehose": firehose });
  const reader = await t.sse("/firehose");
  assert.equal((await reader.nextEvent())?.id, "1");
  await reader.cancel();
  await until(() => disposed.length === 1, "the scope disposal");
  assert.equal(ended, "aborted");
  assert.deepEqual(t.errors(), [], "a client leaving is not an error");
  await t.app.stop();
});

Deno.test("a returned async iterable is streamed, and stopped when the client leaves", async () => {
  let cleanedUp = false;
  const counter = endpoint().query({ limit: Int }).returns(Stream(Tick)).handle(
    async function* (ctx) {
      try {
        for (let n = 1; n <= ctx.queryParams().limit; n++) yield { n };
        if (ctx.queryParams().limit === 0) {
          for (let n = 1;; n++) {
            yield { n };
            await new Promise((r) => setTimeout(r, 1));
          }
        }
      } finally {
        cleanedUp = true;
      }
    },
  );
  const t = await start({ "/count": counter });
  const client = await WsClient.connect(`${t.ws}/count?limit=3`);
  assert.deepEqual((await client.rest()).messages, [{ n: 1 }, { n: 2 }, { n: 3 }]);
  const endless = await t.sse("/count?limit=0");
  assert.deepEqual(await endless.nextEvent(), { id: "1", data: '{"n":1}' });
  cleanedUp = false;
  await endless.cancel();
  await until(() => cleanedUp, "the generator's finally block");
  await t.app.stop();
});

Deno.test("a handler error ends an SSE stream with an error event carrying the envelope", async () => {
  const failing = endpoint().params({ kind: String }).returns(Stream(Tick)).handle(
    async (ctx) => {
      await ctx.send({ n: 1 });
      if (ctx.params.kind === "missing") throw new NotFoundException('Channel "x" not found');
      throw new Error("database is down");
    },
  );
  const t = await start({ "/fail/:kind": failing });
  const missing = await t.sse("/fail/missing");
  assert.deepEqual(await missing.nextEvent(), { id: "1", data: '{"n":1}' });
  assert.deepEqual(await missing.nextEvent(), {
    id: "2",
    event: "error",
    data: '{"statusCode":404,"message":"Channel \\"x\\" not found","error":"Not Found"}',
  });
  assert.equal(await missing.nextEvent(), undefined);
  assert.deepEqual(t.errors(), []);
  const crash = await t.sse("/fail/crash");
  await crash.nextEvent();
  const error = await crash.nextEvent();
  assert.equal(error?.event, "error");
  assert.deepEqual(JSON.parse(error!.data!), {
    statusCode: 500,
    message: "Internal Server Error",
    error: "Internal Server Error",
  });
  assert.equal(await crash.nextEvent(), undefined);
  assert.deepEqual(t.errors(), ["Unhandled error in GET /fail/:kind"]);
  await t.app.stop();
});

Deno.test("a handler error closes a WebSocket with 1011 and the error envelope", async () => {
  const failing = endpoint().body(Stream(Tick)).returns(Stream(Tick)).handle(async (ctx) => {
    for await (const m of ctx.messages()) {
      if (m.n < 0) throw new NotFoundException(`Item "${m.n}" not found`);
      await ctx.send({ n: m.n * 10 });
    }
  });
  const t = await start({ "/items": failing });
  const client = await WsClient.connect(`${t.ws}/items`);
  client.send({ n: 4 });
  client.send({ n: -1 });
  assert.deepEqual(await client.rest(), {
    messages: [{ n: 40 }, {
      error: { statusCode: 404, message: 'Item "-1" not found', error: "Not Found" },
    }],
    code: 1011,
    reason: 'Item "-1" not found',
  });
  await t.app.stop();
});

Deno.test("an outgoing message that fails its schema closes with 1011 and is logged", async () => {
  const wrong = endpoint().returns(Stream(Tick)).handle(async (ctx) => {
    await ctx.send({ n: "one" } as never);
  });
  const t = await start({ "/wrong": wrong });
  const client = await WsClient.connect(`${t.ws}/wrong`);
  const { messages, code } = await client.rest();
  assert.equal(code, 1011);
  assert.deepEqual(messages, [{
    error: { statusCode: 500, message: "Internal Server Error", error: "Internal Server Error" },
  }]);
  const record = t.sink.records.find((r) => r.level === "error");
  assert.match(
    String((record?.fields.error as Error).message),
    /Invalid message sent by "GET \/wrong": message\.n must be an integer/,
  );
  await t.app.stop();
});

const Line = { text: String };

Deno.test("client stream: validated messages until the end frame, then the result and 1000", async () => {
  const count = endpoint().body(Stream(Line)).returns({ count: Int, chars: Int }).handle(
    async (ctx) => {
      let count = 0;
      let chars = 0;
      for await (const m of ctx.messages()) {
        count++;
        chars += m.text.length;
      }
      return { count, chars, internal: true };
    },
  );
  const t = await start({ "/count": count });
  const client = await WsClient.connect(`${t.ws}/count`);
  client.send({ text: "hello" });
  client.send({ text: "world!" });
  client.socket.send("");
  assert.deepEqual(await client.rest(), {
    messages: [{ count: 2, chars: 11 }],
    code: 1000,
    reason: "",
  });
  const bad = await WsClient.connect(`${t.ws}/count`);
  bad.send({ text: 42 });
  const { messages, code } = await bad.rest();
  assert.equal(code, 1007);
  assert.deepEqual(messages, [{
    error: {
      message: "message.text must be a string",
      errors: [{ field: "message.text", message: "message.text must be a string" }],
    },
  }]);
  const plain = await fetch(`${t.url}/count`, { headers: { accept: "text/event-stream" } });
  assert.equal(plain.status, 400);
  assert.match((await plain.json()).message, /needs a WebSocket upgrade/);
  await t.app.stop();
});

Deno.test("bidirectional stream: replies to each message and closes after the end frame", async () => {
  const echo = endpoint().body(Stream(Line)).returns(Stream({ upper: String })).handle(
    async function* (ctx) {
      for await (const m of ctx.messages()) yield { upper: m.text.toUpperCase() };
    },
  );
  const t = await start({ "/echo": echo });
  const client = await WsClient.connect(`${t.ws}/echo`);
  client.send({ text: "ping" });
  assert.deepEqual(await client.json(), { upper: "PING" });
  client.send({ text: "pong" });
  assert.deepEqual(await client.json(), { upper: "PONG" });
  client.socket.send("");
  assert.deepEqual(await client.rest(), { messages: [], code: 1000, reason: "" });
  await t.app.stop();
});

Deno.test("server stream over a WebSocket takes its body from the first message", async () => {
  const range = endpoint().body({ from: Int, to: Int }).returns(Stream(Tick)).handle(
    async (ctx) => {
      const { from, to } = await ctx.body();
      for (let n = from; n <= to; n++) await ctx.send({ n });
    },
  );
  const t = await start({ "/range": range });
  const client = await WsClient.connect(`${t.ws}/range`);
  client.send({ from: 5, to: 6 });
  client.send({ ignored: true });
  assert.deepEqual(await client.rest(), { messages: [{ n: 5 }, { n: 6 }], code: 1000, reason: "" });
  const bad = await WsClient.connect(`${t.ws}/range`);
  bad.send({ from: "a", to: 1 });
  const { code, messages } = await bad.rest();
  assert.equal(code, 1007);
  assert.equal(
    (messages[0] as { error: { message: string } }).error.message,
    "body.from must be an integer",
  );
  const sse = await fetch(`${t.url}/range`, { headers: { accept: "text/event-stream" } });
  assert.equal(sse.status, 400);
  assert.deepEqual((await sse.json()).errors, [{ field: "body", message: "body is required" }]);
  await t.app.stop();
});

Deno.test("Application.stop() ends open SSE streams and closes WebSockets with 1001", async () => {
  let aborted = 0;
  const forever = endpoint().returns(Stream(Tick)).handle(async (ctx) => {
    await ctx.send({ n: 1 });
    await new Promise<void>((resolve) =>
      ctx.signal.addEventListener("abort", () => {
        aborted++;
        resolve();
      })
    );
  });
  const t = await start({ "/forever": forever });
  const reader = await t.sse("/forever");
  await reader.nextEvent();
  const client = await WsClient.connect(`${t.ws}/forever`);
  assert.deepEqual(await client.json(), { n: 1 });
  await t.app.stop();
  assert.equal(await reader.nextEvent(), undefined);
  const closed = await client.closed;
  assert.deepEqual([closed.code, closed.reason], [1001, "Server is stopping"]);
  assert.equal(aborted, 2);
});

Deno.test("stream endpoints without a socket: HEAD answers headers only, an upgrade fails with 400", async () => {
  let calls = 0;
  const feed = endpoint().returns(Stream(Tick)).handle(() => void calls++);
  const app = application({ logger: createLogger({ level: "silent" }) }).use(
    api({ autoScan: false }).route("GET", "/feed", feed),
  );
  const head = await app.request("/feed", {
    method: "HEAD",
    headers: { accept: "text/event-stream" },
  });
  assert.equal(head.status, 200);
  assert.equal(head.headers.get("content-type"), "text/event-stream; charset=utf-8");
  const upgrade = await app.request("/feed", {
    headers: { upgrade: "websocket", connection: "Upgrade" },
  });
  assert.equal(upgrade.status, 400);
  assert.match((await upgrade.json()).message, /^Cannot upgrade to a WebSocket: /);
  assert.equal(calls, 0);
  await app.stop();
});

Deno.test("injected providers are resolved before the response; a failure answers 500", async () => {
  const Broken = provider<string>({
    name: "Broken",
    lifetime: "scoped",
    factory: () => {
      throw new Error("no connection");
    },
  });
  const feed = endpoint().returns(Stream(Tick)).inject({ b: Broken }).handle(() => {});
  const t = await start({ "/feed": feed });
  const res = await fetch(`${t.url}/feed`, { headers: { accept: "text/event-stream" } });
  assert.equal(res.status, 500);
  assert.equal((await res.json()).message, "Internal Server Error");
  assert.deepEqual(t.errors(), ["Unhandled error in GET /feed"]);
  await t.app.stop();
});

Deno.test("a slow SSE reader makes ctx.send() wait instead of growing server memory", async () => {
  let sent = 0;
  const big = endpoint().returns(Stream({ blob: String })).handle(async (ctx) => {
    const blob = "b".repeat(16 * 1024);
    for (;;) {
      await ctx.send({ blob });
      sent++;
    }
  });
  const t = await start({ "/big": big }, { streams: { sseHighWaterMark: 32 * 1024 } });
  const res = await fetch(`${t.url}/big`, { headers: { accept: "text/event-stream" } });
  const reader = res.body!.getReader();
  await reader.read();
  let last = -1;
  // Let the pipes fill until the handler stops making progress.
  while (sent !== last) {
    last = sent;
    await new Promise((r) => setTimeout(r, 30));
  }
  assert.ok(
    sent * 16 * 1024 < 32 * 1024 * 1024,
    `${sent} messages sent to a client that reads none`,
  );
  while (sent === last) await reader.read();
  assert.ok(sent > last, "the handler continues once the client reads again");
  await reader.cancel();
  await t.app.stop();
});
