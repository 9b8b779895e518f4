/**
 * The servers of the Event Server row of `deno task bench:streams`: `es` (fw's `eventServer()`
 * with the in-memory realtime broker; clients speak `fw.events.v1`: hello, subscribe, events) and
 * `bare` (a hand-written `Deno.serve` WebSocket fan-out, each message encoded once) as the
 * baseline. Both publish in-process, so the row measures the fan-out path, not HTTP publish.
 *
 * Run as `deno run -A --v8-flags=--expose-gc scripts/_bench_eventserver_server.ts <es|bare>`.
 * Prints `{"port"}`, then answers commands on stdin with one JSON line each: `mem`
 * (`{rss, heap}` after a full GC), `subs`, `start <batch>` (publish batches back to back, one
 * macrotask apart), `stop` (`{published}`), `tick <count> <intervalMs>` (publish `count`
 * messages `intervalMs` apart, for latency; answers when done), `tickhttp <count> <intervalMs>`
 * (the same through `POST /events/publish`; `es` only).
 *
 * @module
 */

import { application, http } from "@fw/application";
import { memoryRealtime, type RealtimeMessage } from "@fw/events";
import { eventServer } from "@fw/events/server";
import { createLogger } from "@fw/runtime";
import { BenchQuote } from "./_bench_eventserver_topic.ts";

const kind = Deno.args[0];
const gc = (globalThis as { gc?: () => void }).gc;
const reply = (value: unknown) => console.log(JSON.stringify(value));
const now = () => performance.timeOrigin + performance.now();

let published = 0;
let running = false;
let subs = 0;
let publishOne: (message: { seq: number; at: number; text: string }) => void;
let port = 0;

if (kind === "es") {
  const realtime = memoryRealtime({ maxLen: 16 });
  const counting = {
    name: realtime.name,
    capabilities: realtime.capabilities,
    publish: realtime.publish.bind(realtime),
    async subscribe(
      t: Parameters<typeof realtime.subscribe>[0],
      cb: (m: RealtimeMessage) => void | Promise<void>,
      o: Parameters<typeof realtime.subscribe>[2],
    ) {
      const s = await realtime.subscribe(t, cb, o);
      subs++;
      return {
        recovered: s.recovered,
        close: () => {
          subs--;
          return s.close();
        },
      };
    },
    close: () => realtime.close(),
  };
  const app = application({ logger: createLogger({ level: "error" }) })
    .use(http({ port: 0, hostname: "127.0.0.1", signals: false }))
    .use(eventServer({
      topics: [BenchQuote],
      realtime: counting,
      pingIntervalMs: 0,
      // The closed loop below does not wait for clients; let them lag as far as the bare server does.
      maxBufferedBytes: 256 * 1024 * 1024,
    }));
  await app.start();
  port = app.address!.port;
  publishOne = (m) => void realtime.publish(BenchQuote.name, m);
} else {
  const sockets = new Set<WebSocket>();
  const server = Deno.serve({ port: 0, hostname: "127.0.0.1", onListen() {} }, (req) => {
    const { socket, response } = Deno.upgradeWebSocket(req, { idleTimeout: 0 });
    socket.onopen = () => {
      sockets.add(socket);
      subs++;
    };
    socket.onclose = () => {
      if (sockets.delete(socket)) subs--;
    };
    return response;
  });
  port = server.addr.port;
  publishOne = (m) => {
    const text = JSON.stringify(m);
    for (const s of sockets) if (s.readyState === WebSocket.OPEN) s.send(text);
  };
}

function message() {
  return { seq: ++published, at: now(), text: "quote ACME 101.25 +0.25" };
}

async function publishLoop(batch: number): Promise<void> {
  running = true;
  while (running) {
    for (let i = 0; i < batch; i++) publishOne(message());
    await new Promise((r) => setTimeout(r, 0));
  }
}

reply({ port });
let buffer = "";
for await (const chunk of Deno.stdin.readable.pipeThrough(new TextDecoderStream())) {
  buffer += chunk;
  let nl: number;
  while ((nl = buffer.indexOf("\n")) >= 0) {
    const [command, a, b] = buffer.slice(0, nl).trim().split(" ");
    buffer = buffer.slice(nl + 1);
    if (command === "mem") {
      for (let i = 0; i < 3; i++) gc?.();
      const m = Deno.memoryUsage();
      reply({ rss: m.rss, heap: m.heapUsed });
    } else if (command === "subs") {
      reply({ subs });
    } else if (command === "start") {
      published = 0;
      void publishLoop(Number(a ?? 10));
      reply({ started: true });
    } else if (command === "stop") {
      running = false;
      reply({ published });
    } else if (command === "tick") {
      const count = Number(a), every = Number(b);
      for (let i = 0; i < count; i++) {
        publishOne(message());
        await new Promise((r) => setTimeout(r, every));
      }
      reply({ ticked: count });
    } else if (command === "tickhttp") {
      // Publish through POST /events/publish (es only): the full publish-to-receive path.
      const count = Number(a), every = Number(b);
      for (let i = 0; i < count; i++) {
        const res = await fetch(`http://127.0.0.1:${port}/events/publish`, {
          method: "POST",
          headers: { "content-type": "application/json" },
          body: JSON.stringify({
            id: crypto.randomUUID(),
            topic: BenchQuote.name,
            payload: message(),
          }),
        });
        await res.body?.cancel();
        await new Promise((r) => setTimeout(r, every));
      }
      reply({ ticked: count });
    } else if (command === "exit") {
      Deno.exit(0);
    }
  }
}
