/**
 * The servers `scripts/bench_streams.ts` drives: fw (a stream endpoint subscribed to a hub) and
 * bare `Deno.serve` (hand-written SSE and WebSocket fan-out, messages encoded once) as the
 * baseline. Run as `deno run -A --v8-flags=--expose-gc scripts/_bench_streams_server.ts <kind>`,
 * kind `fw`, `bare`, or for the idle set `fw-nosignal` (fw's idle handler never settles and does
 * not touch `ctx.signal`) and `bare+signal` (bare idle connections also hold an abort signal with
 * one listener, aborted when the client leaves, as fw's idle handler does).
 *
 * Routes: `/idle` (a stream that only sends heartbeats) and `/fanout` (every published message).
 * Commands on stdin, one per line, each answered with one JSON line on stdout:
 * `mem` (after a full GC: `{rss, heap}`), `subs` (`{subs}`), `start <batch>` (publish batches of
 * messages as fast as the slowest subscriber allows), `stop` (`{published}`).
 *
 * @module
 */

import { api, application, endpoint, http, Int, Stream } from "@fw/application";
import { createLogger } from "@fw/runtime";

const kind = Deno.args[0];
const gc = (globalThis as { gc?: () => void }).gc;
const reply = (value: unknown) => console.log(JSON.stringify(value));

interface Message {
  seq: number;
  at: number;
  text: string;
}

/** Subscribers of the fan-out: each gets a callback per published message. */
const subscribers = new Set<(m: Message) => void>();
let published = 0;
let delivered = 0;
let running = false;

async function publishLoop(batch: number): Promise<void> {
  running = true;
  while (running) {
    // Closed loop: publish the next batch once every subscriber has taken the previous ones.
    while (running && (published * subscribers.size) - delivered > batch * subscribers.size) {
      await new Promise((r) => setTimeout(r, 0));
    }
    for (let i = 0; i < batch; i++) {
      published++;
      const message = { seq: published, at: Date.now(), text: "quote ACME 101.25 +0.25" };
      for (const deliver of subscribers) deliver(message);
    }
    await new Promise((r) => setTimeout(r, 0));
  }
}

/** A queue a handler iterates: filled by the fan-out, ended by the connection's signal. */
class Subscription implements AsyncIterableIterator<Message> {
  readonly #queue: Message[] = [];
  #wake: ((r: IteratorResult<Message>) => void) | undefined;
  #done = false;
  readonly #deliver = (m: Message) => {
    const wake = this.#wake;
    if (wake !== undefined) {
      this.#wake = undefined;
      wake({ done: false, value: m });
    } else this.#queue.push(m);
  };

  constructor(signal: AbortSignal) {
    subscribers.add(this.#deliver);
    signal.addEventListener("abort", () => this.return(), { once: true });
  }

  next(): Promise<IteratorResult<Message>> {
    if (this.#queue.length > 0) {
      return Promise.resolve({ done: false, value: this.#queue.shift()! });
    }
    if (this.#done) return Promise.resolve({ done: true, value: undefined });
    return new Promise((resolve) => this.#wake = resolve);
  }

  return(): Promise<IteratorResult<Message>> {
    this.#done = true;
    subscribers.delete(this.#deliver);
    this.#wake?.({ done: true, value: undefined });
    this.#wake = undefined;
    return Promise.resolve({ done: true, value: undefined });
  }

  [Symbol.asyncIterator](): this {
    return this;
  }
}

let port = 0;

if (kind === "fw" || kind === "fw-nosignal") {
  const Msg = { seq: Int, at: Int, text: String };
  // `fw`: the idle handler waits for the client to leave on ctx.signal (an AbortSignal with one
  // listener per connection, as a handler that cleans up would). `fw-nosignal`: it never settles
  // and fw's own close handling ends the connection: what fw itself holds.
  const idle = endpoint().returns(Stream(Msg)).handle((ctx) =>
    kind === "fw"
      ? new Promise<void>((resolve) => ctx.signal.addEventListener("abort", () => resolve()))
      : new Promise<void>(() => {})
  );
  const fanout = endpoint().returns(Stream(Msg)).handle(async (ctx) => {
    for await (const m of new Subscription(ctx.signal)) {
      await ctx.send(m);
      delivered++;
    }
  });
  const app = application({ logger: createLogger({ level: "warn" }) })
    .use(http({ port: 0, hostname: "127.0.0.1", signals: false }))
    .use(
      api({ autoScan: false })
        .route("GET", "/idle", idle)
        .route("GET", "/fanout", fanout),
    );
  await app.start();
  port = app.address!.port;
} else {
  const withSignal = kind === "bare+signal";
  const encoder = new TextEncoder();
  const server = Deno.serve({ port: 0, hostname: "127.0.0.1", onListen() {} }, (req) => {
    const fan = new URL(req.url).pathname === "/fanout";
    if (req.headers.get("upgrade") === "websocket") {
      const { socket, response } = Deno.upgradeWebSocket(req);
      if (withSignal && !fan) {
        // The same per-connection state fw's idle handler keeps: an abort signal with a listener,
        // aborted when the client leaves.
        const ac = new AbortController();
        ac.signal.addEventListener("abort", () => {});
        socket.onclose = () => ac.abort();
      }
      if (fan) {
        let text = "";
        let last: Message | undefined;
        const deliver = (m: Message) => {
          if (m !== last) text = JSON.stringify(last = m);
          if (socket.readyState === WebSocket.OPEN) socket.send(text);
          delivered++;
        };
        socket.onopen = () => subscribers.add(deliver);
        socket.onclose = () => subscribers.delete(deliver);
      }
      return response;
    }
    let deliver: ((m: Message) => void) | undefined;
    const ac = withSignal && !fan ? new AbortController() : undefined;
    ac?.signal.addEventListener("abort", () => {});
    const body = new ReadableStream<Uint8Array>({
      start(controller) {
        if (!fan) return;
        let bytes = new Uint8Array();
        let last: Message | undefined;
        deliver = (m: Message) => {
          if (m !== last) {
            last = m;
            bytes = encoder.encode(`id: ${m.seq}\ndata: ${JSON.stringify(m)}\n\n`);
          }
          controller.enqueue(bytes);
          delivered++;
        };
        subscribers.add(deliver);
      },
      cancel() {
        ac?.abort();
        if (deliver) subscribers.delete(deliver);
      },
    });
    return new Response(body, { headers: { "content-type": "text/event-stream" } });
  });
  port = server.addr.port;
}

reply({ port });
const lines = Deno.stdin.readable.pipeThrough(new TextDecoderStream());
let buffer = "";
for await (const chunk of lines) {
  buffer += chunk;
  let nl: number;
  while ((nl = buffer.indexOf("\n")) >= 0) {
    const [command, arg] = buffer.slice(0, nl).trim().split(" ");
    buffer = buffer.slice(nl + 1);
    if (command === "mem") {
      for (let i = 0; i < 3; i++) gc?.();
      const m = Deno.memoryUsage();
      reply({ rss: m.rss, heap: m.heapUsed });
    } else if (command === "subs") {
      reply({ subs: subscribers.size });
    } else if (command === "start") {
      published = delivered = 0;
      void publishLoop(Number(arg ?? 10));
      reply({ started: true });
    } else if (command === "stop") {
      running = false;
      reply({ published, delivered });
    } else if (command === "exit") {
      Deno.exit(0);
    }
  }
}
