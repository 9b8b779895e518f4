import assert from "node:assert/strict";
import { createLogger, Int, ManualClock, MemorySink, Stream } from "@fw/runtime";
import { api } from "./api.ts";
import { application } from "./application.ts";
import { endpoint } from "./endpoint.ts";
import { http, type HttpOptions } from "./http.ts";
import { WsClient } from "./testdata/stream_clients.ts";

const Tick = { n: Int };

async function start(options: HttpOptions) {
  const clock = new ManualClock(1_000);
  const sink = new MemorySink();
  let aborted = 0;
  const routes = api({ autoScan: false })
    .route("GET", "/ping", endpoint().handle(() => ({ pong: true })))
    .route(
      "GET",
      "/forever",
      endpoint().returns(Stream(Tick)).handle(async (ctx) => {
        await ctx.send({ n: 1 });
        await new Promise<void>((resolve) =>
          ctx.signal.addEventListener("abort", () => {
            aborted++;
            resolve();
          })
        );
      }),
    );
  const app = application({ clock, logger: createLogger({ level: "debug", sink }) })
    .use(http({ port: 0, hostname: "127.0.0.1", signals: false, ...options }))
    .use(routes);
  await app.start();
  const url = app.address!.url;
  const get = async (path: string) => {
    const res = await fetch(url + path);
    return { status: res.status, body: await res.json() };
  };
  return { app, clock, sink, url, get, aborted: () => aborted };
}

Deno.test("http({ health }) serves liveness and readiness while started", async () => {
  const t = await start({ health: true });
  try {
    assert.deepEqual(await t.get("/livez"), { status: 200, body: { status: "alive" } });
    assert.deepEqual(await t.get("/readyz"), { status: 200, body: { status: "ready" } });
    assert.deepEqual(await t.get("/readyz?verbose=1"), { status: 200, body: { status: "ready" } });
    const res = await fetch(`${t.url}/readyz`);
    assert.equal(res.headers.get("cache-control"), "no-store");
    await res.body?.cancel();
  } finally {
    const stopping = t.app.stop();
    await t.clock.advance(5_000);
    await stopping;
  }
});

Deno.test("http({ health }) answers 503 on readiness from the start of a stop to the close of the listener, still serving and streaming", async () => {
  const t = await start({
    health: { liveness: "/health/live", readiness: "/health/ready", drainDelayMs: 3_000 },
  });
  const port = t.app.address!.port;
  const ws = await WsClient.connect(`${t.url.replace(/^http/, "ws")}/forever`);
  assert.deepEqual(await ws.json(), { n: 1 });
  assert.equal((await t.get("/health/ready")).status, 200);

  const stopped = t.app.stop();
  let done = false;
  stopped.then(() => done = true);
  // from the first moment of the stop, for the whole drain delay
  for (const step of [0, 1_000, 999, 1_000]) {
    await t.clock.advance(step);
    assert.deepEqual(await t.get("/health/ready"), {
      status: 503,
      body: { status: "stopping" },
    });
    assert.deepEqual(await t.get("/health/live"), { status: 200, body: { status: "alive" } });
    assert.deepEqual(await t.get("/ping"), { status: 200, body: { pong: true } });
    assert.equal(done, false);
    assert.equal(t.aborted(), 0, "the stream stays open during the drain delay");
  }
  await t.clock.advance(1);
  await stopped;
  // the stream was told to reconnect (1001 going away), then the listener closed
  const closed = await ws.closed;
  assert.deepEqual([closed.code, closed.reason], [1001, "Server is stopping"]);
  assert.equal(t.aborted(), 1);
  await assert.rejects(
    () => Deno.connect({ hostname: "127.0.0.1", port }),
    Deno.errors.ConnectionRefused,
  );
  assert.ok(
    t.sink.records.some((r) => /readiness answers 503, draining for 3000 ms/.test(r.message)),
  );
});

Deno.test("http({ health }) with drainDelayMs 0 stops at once; without health there is no such route", async () => {
  const t = await start({ health: { drainDelayMs: 0 } });
  await t.app.stop();
  const bare = await start({});
  try {
    assert.equal((await bare.get("/readyz")).status, 404);
  } finally {
    await bare.app.stop();
  }
});

Deno.test("http({ health }) rejects a bad path or delay at start-up, naming the option", async () => {
  const cases: [HttpOptions["health"], RegExp][] = [
    [
      { readiness: "ready" },
      /"health\.readiness": expected a path starting with "\/", got "ready"/,
    ],
    [{ liveness: "/x?y" }, /"health\.liveness"/],
    [{ drainDelayMs: -1 }, /"health\.drainDelayMs": expected a non-negative number/],
    [{ liveness: "/h", readiness: "/h" }, /liveness and readiness share the path "\/h"/],
    ["yes" as unknown as boolean, /"health": expected true or an object, got "yes"/],
  ];
  for (const [health, message] of cases) {
    const app = application().use(http({ port: 0, signals: false, health }));
    await assert.rejects(() => app.start(), message);
    await app.stop();
  }
});
