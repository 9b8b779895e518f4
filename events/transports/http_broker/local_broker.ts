/**
 * The local development broker: an in-memory broker with an HTTP and
 * WebSocket front so several local processes share one broker. An app with no transport and no
 * `EVENTS_ENDPOINT` serves it on 127.0.0.1:4222 (`EVENTS_BROKER_PORT` overrides); other
 * processes set `EVENTS_ENDPOINT=http://127.0.0.1:4222` and reach it through
 * `httpBrokerTransport`.
 *
 * Endpoints (JSON; ours, for development only):
 *
 * | Method and path | Meaning |
 * |---|---|
 * | `GET /health` | `{ "broker": "fw-local", "protocol": 1 }` |
 * | `POST /publish?deliverAt=` | body: an envelope; `deliverAt` (optional, ms since the epoch): held in the broker's process until then; 202, 400 for a malformed envelope or `deliverAt`, 503 when a queue is full |
 * | `POST /dead-letter` | body: a `<topic>.dlq` envelope; 202 |
 * | `GET /dead-letters?topic=` | kept dead letters |
 * | `POST /dead-letters/take` | body `{ "ids": [...] }`: removes and returns them |
 * | `GET /subscribe?topic=&group=&distribution=&instance=` | WebSocket: the broker sends `{ type: "deliver", seq, attempt, envelope }`; the subscriber answers `{ type: "ack", seq }` or `{ type: "retry", seq, delay }` |
 *
 * When a subscriber's socket closes, its unanswered deliveries are redelivered at once.
 *
 * @module
 */

import type { Logger } from "@fw/runtime";
import { envelopeProblem } from "../../envelope.ts";
import type { MemoryBroker } from "../memory_broker.ts";
import { type Delivery, QueueFullError, type Subscription } from "../../transport.ts";

const MAX_BODY = 1 << 20;

function json(status: number, body: unknown): Response {
  return new Response(JSON.stringify(body), {
    status,
    headers: { "content-type": "application/json" },
  });
}

function error(status: number, message: string): Response {
  const phrase = status === 400
    ? "Bad Request"
    : status === 404
    ? "Not Found"
    : status === 413
    ? "Payload Too Large"
    : status === 503
    ? "Service Unavailable"
    : "Error";
  return json(status, { statusCode: status, message, error: phrase });
}

async function readJson(req: Request): Promise<unknown> {
  const text = await req.text();
  if (text.length > MAX_BODY) throw new RangeError("body too large");
  return JSON.parse(text);
}

/**
 * The local broker's request handler (`serveLocalBroker()` loads this module and makes it on the
 * first request).
 *
 * @param get Gives the broker.
 * @param sockets Open subscriber sockets (closed by the server's `close()`).
 * @param logger Logger for failed requests.
 * @returns The handler.
 */
export function brokerHandler(
  get: () => Promise<MemoryBroker>,
  sockets: Set<WebSocket>,
  logger?: Logger,
): (req: Request) => Promise<Response> {
  return async (req) => {
    const url = new URL(req.url);
    try {
      switch (`${req.method} ${url.pathname}`) {
        case "GET /health":
          return json(200, { broker: "fw-local", protocol: 1 });
        case "POST /publish":
        case "POST /dead-letter": {
          const envelope = await readJson(req);
          const problem = envelopeProblem(envelope);
          if (problem) return error(400, `Invalid envelope: ${problem}`);
          const env = envelope as Parameters<MemoryBroker["publish"]>[0];
          const at = url.searchParams.get("deliverAt");
          if (at !== null && !(Number(at) >= 0)) {
            return error(400, `Invalid query parameter "deliverAt": expected ms since the epoch`);
          }
          if (url.pathname === "/publish") {
            await (await get()).publish(env, at === null ? undefined : { deliverAt: Number(at) });
          } else await (await get()).deadLetter(env);
          return json(202, { id: env.id });
        }
        case "GET /dead-letters": {
          const topic = url.searchParams.get("topic") ?? undefined;
          return json(200, await (await get()).deadLetters.list(topic ? { topic } : {}));
        }
        case "POST /dead-letters/take": {
          const body = await readJson(req) as { ids?: unknown };
          if (!Array.isArray(body?.ids) || !body.ids.every((i) => typeof i === "string")) {
            return error(400, 'Invalid body: "ids" must be an array of strings');
          }
          return json(200, await (await get()).deadLetters.take(body.ids));
        }
        case "GET /subscribe":
          return subscribe(req, url, await get(), sockets, logger);
        default:
          return error(404, `Not found: ${req.method} ${url.pathname}`);
      }
    } catch (err) {
      if (err instanceof QueueFullError) return error(503, err.message);
      if (err instanceof SyntaxError) return error(400, `Invalid JSON body: ${err.message}`);
      if (err instanceof RangeError) return error(413, "Body larger than 1 MiB");
      logger?.error("local broker request failed", { error: err });
      return error(500, "Internal Server Error");
    }
  };
}

function subscribe(
  req: Request,
  url: URL,
  broker: MemoryBroker,
  sockets: Set<WebSocket>,
  logger?: Logger,
): Response {
  const q = url.searchParams;
  const topic = q.get("topic"), group = q.get("group"), instance = q.get("instance");
  const distribution = q.get("distribution") ?? "competing";
  if (!topic || !group || !instance) {
    return error(400, 'Query parameters "topic", "group" and "instance" are required');
  }
  if (distribution !== "competing" && distribution !== "broadcast") {
    return error(400, 'Query parameter "distribution" must be "competing" or "broadcast"');
  }
  if (req.headers.get("upgrade")?.toLowerCase() !== "websocket") {
    return error(400, "Expected a WebSocket upgrade");
  }
  const { socket, response } = Deno.upgradeWebSocket(req);
  const pending = new Map<number, Delivery>();
  let seq = 0;
  let subscription: Subscription | undefined;
  let closed = false;
  sockets.add(socket);
  socket.onopen = () => {
    broker.subscribe({ topic, group, distribution, instanceId: instance }, (d) => {
      if (closed) return "rejected";
      const n = ++seq;
      pending.set(n, d);
      socket.send(
        JSON.stringify({ type: "deliver", seq: n, attempt: d.attempt, envelope: d.envelope }),
      );
      return "accepted";
    }).then((s) => {
      if (closed) void s.close();
      else {
        subscription = s;
        socket.send(JSON.stringify({ type: "subscribed" }));
      }
    }, (err) => {
      socket.close(1008, String(err instanceof Error ? err.message : err).slice(0, 120));
    });
  };
  socket.onmessage = (ev) => {
    let frame: { type?: unknown; seq?: unknown; delay?: unknown };
    try {
      frame = JSON.parse(String(ev.data));
    } catch {
      return;
    }
    const d = typeof frame.seq === "number" ? pending.get(frame.seq) : undefined;
    if (!d) return;
    pending.delete(frame.seq as number);
    if (frame.type === "ack") void Promise.resolve(d.ack()).catch(() => {});
    else if (frame.type === "retry") {
      const delay = typeof frame.delay === "number" && frame.delay >= 0 ? frame.delay : 1000;
      void Promise.resolve(d.retry(delay)).catch(() => {});
    }
  };
  socket.onerror = () => {};
  socket.onclose = () => {
    closed = true;
    sockets.delete(socket);
    void subscription?.close();
    // Unanswered deliveries go back to the group at once (another instance or the waiting list).
    for (const d of pending.values()) void Promise.resolve(d.retry(0)).catch(() => {});
    pending.clear();
    logger?.debug("local broker subscriber left", { topic, group, instance });
  };
  return response;
}
