import assert from "node:assert/strict";
import {
  InMemorySpanExporter,
  type ReadableSpan,
  SimpleSpanProcessor,
  TracerProvider,
} from "@opentelemetry/sdk-trace";
import {
  createLogger,
  Int,
  MemorySink,
  ServiceUnavailableException,
  Stream,
  tryContext,
} from "@fw/runtime";
import { type Application, application } from "../application.ts";
import { api } from "../api.ts";
import { endpoint } from "../endpoint.ts";
import { http } from "../http.ts";
import { oauth } from "../policies/oauth.ts";
import { telemetry, type TelemetryOptions } from "./telemetry.ts";
import { signJwt } from "../testdata/jwt.ts";
import { SseReader, until, WsClient } from "../testdata/stream_clients.ts";

const Tick = { n: Int };
const SECRET = "t".repeat(32);

function traced(options: Partial<TelemetryOptions> = {}) {
  const exporter = new InMemorySpanExporter();
  const provider = new TracerProvider({ spanProcessors: [new SimpleSpanProcessor({ exporter })] });
  const sink = new MemorySink();
  const app = application({ logger: createLogger({ sink }) })
    .use(oauth({ issuer: "https://id.test", audience: "api", secret: SECRET }))
    .use(telemetry({ tracerProvider: provider, http: false, ...options }));
  const spans = (): ReadableSpan[] => exporter.getFinishedSpans();
  return { app, spans, sink };
}

function routes(app: Application): Application {
  return app.use(
    api({ autoScan: false })
      .route(
        "GET",
        "/users/:id",
        endpoint().params({ id: Int }).handle((ctx) => ({ id: ctx.params.id })),
      )
      .route("POST", "/items", endpoint().body({ name: String, count: Int }).handle(() => ({})))
      .route(
        "GET",
        "/boom",
        endpoint().handle(() => {
          throw new Error("disk on fire");
        }),
      )
      .route(
        "GET",
        "/busy",
        endpoint().handle(() => {
          throw new ServiceUnavailableException("Try later");
        }),
      )
      .route(
        "GET",
        "/me",
        endpoint().handle(() => ({ trace: tryContext<{ traceId: string }>()?.traceId })),
      ),
  );
}

Deno.test("telemetry() traces a request as one SERVER span named by its route pattern", async () => {
  const { app, spans } = traced();
  routes(app);
  const res = await app.request("/users/7?x=secret", {
    headers: { "user-agent": "probe/2", authorization: "Bearer not-a-token-value", cookie: "s=1" },
  });
  assert.equal(res.status, 200);
  await res.body?.cancel();
  const [span] = spans();
  assert.equal(span.name, "GET /users/:id");
  assert.equal(span.kind, 1);
  assert.deepEqual(span.attributes, {
    "http.request.method": "GET",
    "url.path": "/users/7",
    "url.scheme": "http",
    "server.address": "localhost",
    "user_agent.original": "probe/2",
    "http.route": "/users/:id",
    "http.response.status_code": res.status,
  });
  // No header values, query strings or bodies by default.
  assert.ok(!JSON.stringify(span.attributes).includes("secret"));
  assert.ok(!JSON.stringify(span.attributes).includes("not-a-token"));
});

Deno.test("telemetry() continues a valid traceparent and the context's traceId is the span's", async () => {
  const { app, spans } = traced();
  routes(app);
  const parent = "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01";
  const res = await app.request("/me", { headers: { traceparent: parent, tracestate: "k=v" } });
  assert.deepEqual(await res.json(), { trace: "0af7651916cd43dd8448eb211c80319c" });
  const [span] = spans();
  assert.equal(span.spanContext().traceId, "0af7651916cd43dd8448eb211c80319c");
  assert.equal(span.parentSpanContext?.spanId, "b7ad6b7169203331");
  assert.equal(span.spanContext().traceState?.get("k"), "v");
  // An invalid traceparent starts a new trace, and the context names it.
  const fresh = await app.request("/me", { headers: { traceparent: "00-zz-00-01" } });
  const { trace } = await fresh.json();
  assert.equal(spans()[1].spanContext().traceId, trace);
  assert.equal(spans()[1].parentSpanContext, undefined);
});

Deno.test("telemetry() records the 400 validation answer as a span event naming the fields", async () => {
  const { app, spans } = traced();
  routes(app);
  const res = await app.request("/items", {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ count: "many", password: "hunter2" }),
  });
  assert.equal(res.status, 400);
  await res.body?.cancel();
  const [span] = spans();
  assert.equal(span.attributes["http.response.status_code"], 400);
  assert.equal(span.status.code, 0, "a 4xx is not a server error");
  const event = span.events.find((e) => e.name === "validation failed");
  assert.deepEqual(event?.attributes, {
    "fw.validation.fields": ["body.name", "body.count"],
    "fw.validation.count": 2,
  });
  assert.ok(!JSON.stringify(span.events).includes("hunter2"));
});

Deno.test("telemetry() marks a 5xx span as ERROR and records the exception", async () => {
  const { app, spans, sink } = traced();
  routes(app);
  assert.equal((await app.request("/boom")).status, 500);
  assert.equal((await app.request("/busy")).status, 503);
  const [boom, busy] = spans();
  assert.equal(boom.name, "GET /boom");
  assert.equal(boom.status.code, 2);
  assert.equal(boom.attributes["error.type"], "500");
  const exception = boom.events.find((e) => e.name === "exception");
  assert.equal(exception?.attributes?.["exception.message"], "disk on fire");
  assert.equal(busy.status.code, 2);
  assert.equal(
    busy.events.find((e) => e.name === "exception")?.attributes?.["exception.message"],
    "Try later",
  );
  // The error log line names the span.
  const line = sink.records.find((r) => r.message === "Unhandled error in GET /boom");
  assert.equal(line?.fields.trace_id, boom.spanContext().traceId);
  assert.equal(line?.fields.span_id, boom.spanContext().spanId);
});

Deno.test("telemetry({ enduser: true }) adds enduser.id from the oauth() user; off by default", async () => {
  const now = Math.floor(Date.now() / 1000);
  const token = await signJwt(
    { iss: "https://id.test", aud: "api", sub: "user-42", iat: now, exp: now + 60 },
    { alg: "HS256", secret: SECRET },
  );
  for (const enduser of [true, false]) {
    const { app, spans } = traced({ enduser });
    routes(app);
    await (await app.request("/me", { headers: { authorization: `Bearer ${token}` } })).body
      ?.cancel();
    assert.equal(spans()[0].attributes["enduser.id"], enduser ? "user-42" : undefined);
  }
});

Deno.test("telemetry({ tracing: false }) makes no spans; without telemetry() the tracer is off", async () => {
  const { app, spans } = traced({ tracing: false });
  routes(app);
  await (await app.request("/me")).body?.cancel();
  assert.deepEqual(spans(), []);
  const plain = application();
  await plain.warmup();
  assert.equal(plain.context.tracer?.enabled, false);
});

Deno.test("telemetry() traces a stream connection as one span for its life, with close code and counts", async () => {
  const { app, spans } = traced();
  app.use(http({ port: 0, hostname: "127.0.0.1", signals: false })).use(
    api({ autoScan: false })
      .route(
        "GET",
        "/echo",
        endpoint().body(Stream(Tick)).returns(Stream(Tick)).handle(async (ctx) => {
          for await (const m of ctx.messages()) await ctx.send({ n: m.n * 2 });
        }),
      )
      .route(
        "GET",
        "/ticks",
        endpoint().returns(Stream(Tick)).handle(async function* () {
          for (let n = 1; n <= 3; n++) yield { n };
        }),
      ),
  );
  await app.start();
  try {
    const port = app.address!.port;
    const ws = await WsClient.connect(`ws://127.0.0.1:${port}/echo`);
    ws.send({ n: 1 });
    ws.send({ n: 2 });
    assert.deepEqual([await ws.json(), await ws.json()], [{ n: 2 }, { n: 4 }]);
    await ws.close(4000);
    const res = await fetch(`http://127.0.0.1:${port}/ticks`, {
      headers: { accept: "text/event-stream" },
    });
    const sse = new SseReader(res);
    for (let i = 0; i < 3; i++) await sse.nextEvent();
    assert.equal(await sse.nextEvent(), undefined);
    await until(() => spans().length === 2, "both stream spans");
    const echo = spans().find((s) => s.name === "GET /echo")!;
    assert.equal(echo.attributes["http.response.status_code"], 101);
    assert.deepEqual(echo.events.find((e) => e.name === "stream.closed")?.attributes, {
      "fw.stream.transport": "websocket",
      "fw.stream.messages_sent": 2,
      "fw.stream.messages_received": 2,
      "fw.stream.close_code": 4000,
    });
    const ticks = spans().find((s) => s.name === "GET /ticks")!;
    assert.deepEqual(ticks.events.find((e) => e.name === "stream.closed")?.attributes, {
      "fw.stream.transport": "sse",
      "fw.stream.messages_sent": 3,
    });
  } finally {
    await app.stop();
  }
});
