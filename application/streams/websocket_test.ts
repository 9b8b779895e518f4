import assert from "node:assert/strict";
import { compile, Int, ManualClock, MaxLength } from "@fw/runtime";
import {
  CloseCode,
  type CloseInfo,
  WebSocketChannel,
  type WebSocketChannelOptions,
  WebSocketClosedError,
} from "./websocket.ts";
import { stalledClient, until, WsClient } from "../testdata/stream_clients.ts";

const Msg = { n: Int, note: MaxLength(20) };

interface Harness {
  url: string;
  channel(): Promise<WebSocketChannel<{ n: number; note: string }, unknown>>;
  shutdown(): Promise<void>;
}

/** A Deno.serve on port 0 that wraps each upgraded socket in a channel. */
function serve(options: WebSocketChannelOptions<{ n: number; note: string }> = {}): Harness {
  const channels: WebSocketChannel<{ n: number; note: string }>[] = [];
  const server = Deno.serve({ port: 0, hostname: "127.0.0.1", onListen() {} }, (req) => {
    const { socket, response } = Deno.upgradeWebSocket(req);
    channels.push(
      new WebSocketChannel(socket, { inbound: compile(Msg, "message"), ...options }),
    );
    return response;
  });
  return {
    url: `ws://127.0.0.1:${server.addr.port}`,
    async channel() {
      await until(() => channels.length > 0, "the server channel");
      return channels.shift()!;
    },
    shutdown: () => server.shutdown(),
  };
}

async function errorClose(
  client: WsClient,
  // deno-lint-ignore no-explicit-any
  channel: WebSocketChannel<any, any>,
): Promise<{ error: unknown; code: number; info: CloseInfo }> {
  const { messages, code } = await client.rest();
  assert.equal(messages.length, 1);
  const info = await channel.closed;
  assert.equal(channel.signal.aborted, true);
  return { error: (messages[0] as { error: unknown }).error, code, info };
}

Deno.test("WebSocketChannel.messages() yields validated messages and ends when the peer closes", async () => {
  const h = serve();
  const client = await WsClient.connect(h.url);
  const channel = await h.channel();
  client.send({ n: 1, note: "a", extra: "dropped" });
  client.send({ n: 2, note: "b" });
  const seen: unknown[] = [];
  for await (const m of channel.messages()) {
    seen.push(m);
    if (seen.length === 2) client.socket.close(1000);
  }
  assert.deepEqual(seen, [{ n: 1, note: "a" }, { n: 2, note: "b" }]);
  assert.deepEqual(await channel.closed, { code: 1000, reason: "", byServer: false });
  assert.equal(channel.signal.aborted, true);
  await assert.rejects(channel.send({}), WebSocketClosedError);
  await client.closed;
  await h.shutdown();
});

Deno.test("WebSocketChannel closes with 1007 and the validation envelope for a bad message", async () => {
  const h = serve();
  const client = await WsClient.connect(h.url);
  const channel = await h.channel();
  client.send({ n: "one", note: "x".repeat(21) });
  const { error, code } = await errorClose(client, channel);
  assert.equal(code, CloseCode.InvalidPayload);
  assert.deepEqual(error, {
    message: "message.n must be an integer; message.note must be at most 20 characters",
    errors: [
      { field: "message.n", message: "message.n must be an integer" },
      { field: "message.note", message: "message.note must be at most 20 characters" },
    ],
  });
  await h.shutdown();
});

Deno.test("WebSocketChannel closes with 1007 for text that is not JSON", async () => {
  const h = serve();
  const client = await WsClient.connect(h.url);
  const channel = await h.channel();
  client.socket.send("{not json");
  const { error, code } = await errorClose(client, channel);
  assert.equal(code, 1007);
  assert.deepEqual(error, {
    message: "message must be valid JSON",
    errors: [{ field: "message", message: "message must be valid JSON" }],
  });
  await h.shutdown();
});

Deno.test("WebSocketChannel closes with 1003 for a binary frame", async () => {
  const h = serve();
  const client = await WsClient.connect(h.url);
  const channel = await h.channel();
  client.socket.send(new Uint8Array([1, 2, 3]));
  const { error, code, info } = await errorClose(client, channel);
  assert.equal(code, CloseCode.UnsupportedData);
  assert.deepEqual(error, {
    statusCode: 400,
    message: "Binary messages are not supported: send JSON text",
    error: "Bad Request",
  });
  assert.equal(info.byServer, true);
  await h.shutdown();
});

Deno.test("WebSocketChannel closes with 1009 for a message over the limit, counting UTF-8 bytes", async () => {
  const h = serve({ maxMessageBytes: 64 });
  const client = await WsClient.connect(h.url);
  const channel = await h.channel();
  client.send({ n: 1, note: "é".repeat(10) }); // 41 bytes: accepted
  assert.deepEqual((await channel.messages().next()).value, { n: 1, note: "é".repeat(10) });
  client.socket.send(JSON.stringify("é".repeat(32))); // 34 characters, 66 bytes
  const { error, code } = await errorClose(client, channel);
  assert.equal(code, CloseCode.MessageTooBig);
  assert.equal((error as { statusCode: number }).statusCode, 413);
  await h.shutdown();
});

Deno.test("WebSocketChannel closes with 1008 when unread messages pass the queue bound", async () => {
  const h = serve({ maxQueuedMessages: 2 });
  const client = await WsClient.connect(h.url);
  const channel = await h.channel();
  for (let i = 0; i < 3; i++) client.send({ n: i, note: "" });
  const { error, code } = await errorClose(client, channel);
  assert.equal(code, CloseCode.PolicyViolation);
  assert.deepEqual(error, {
    statusCode: 429,
    message: "Too many unread messages: more than 2 waiting",
    error: "Too Many Requests",
  });
  const rest: unknown[] = [];
  for await (const m of channel.messages()) rest.push(m);
  assert.deepEqual(rest, [], "a server-side close drops the queue");
  await h.shutdown();
});

Deno.test("WebSocketChannel closes with 1001 after the idle timeout of the injected clock", async () => {
  const clock = new ManualClock(0);
  const h = serve({ clock, idleTimeoutMs: 1000 });
  const client = await WsClient.connect(h.url);
  const channel = await h.channel();
  await clock.advance(600);
  client.send({ n: 1, note: "" });
  await channel.messages().next(); // activity at t=600
  await clock.advance(900); // t=1500: 900 ms idle
  assert.equal(channel.signal.aborted, false);
  await clock.advance(100); // t=1600: 1000 ms idle
  const { error, code } = await errorClose(client, channel);
  assert.equal(code, CloseCode.GoingAway);
  assert.deepEqual(error, {
    statusCode: 408,
    message: "Idle timeout: no message for 1000 ms",
    error: "Request Timeout",
  });
  assert.equal(clock.pending, 0);
  await h.shutdown();
});

Deno.test("WebSocketChannel treats an empty frame as the end of the peer's stream", async () => {
  const h = serve();
  const client = await WsClient.connect(h.url);
  const channel = await h.channel();
  client.send({ n: 1, note: "" });
  client.send({ n: 2, note: "" });
  client.socket.send("");
  let total = 0;
  for await (const m of channel.messages()) total += m.n;
  assert.equal(channel.inputEnded, true);
  await channel.send({ total });
  channel.close();
  const { messages, code } = await client.rest();
  assert.deepEqual(messages, [{ total: 3 }]);
  assert.equal(code, 1000);
  await h.shutdown();
});

Deno.test("WebSocketChannel closes with 1008 for a message after the end of the stream", async () => {
  const h = serve();
  const client = await WsClient.connect(h.url);
  const channel = await h.channel();
  client.socket.send("");
  client.send({ n: 1, note: "" });
  const { code } = await errorClose(client, channel);
  assert.equal(code, 1008);
  await h.shutdown();
});

Deno.test("WebSocketChannel.send() validates and strips outgoing messages", async () => {
  const h = serve({ outbound: compile({ ok: Boolean }, "message") as never });
  const client = await WsClient.connect(h.url);
  const channel = await h.channel();
  await channel.send({ ok: true, secret: "hidden" });
  await assert.rejects(channel.send({ ok: "yes" }), {
    name: "TypeError",
    message: "Invalid message sent by WebSocket: message.ok must be a boolean",
  });
  assert.deepEqual(await client.json(), { ok: true });
  channel.close(CloseCode.Normal, "bye");
  const { code, reason } = await client.rest();
  assert.deepEqual([code, reason], [1000, "bye"]);
  await h.shutdown();
});

Deno.test("WebSocketChannel.discardIncoming() drops messages but still enforces the limits", async () => {
  const h = serve({ maxMessageBytes: 100, maxQueuedMessages: 1 });
  const client = await WsClient.connect(h.url);
  const channel = await h.channel();
  channel.discardIncoming();
  for (let i = 0; i < 5; i++) client.socket.send("not even json");
  client.socket.send("x".repeat(101));
  const { code } = await errorClose(client, channel);
  assert.equal(code, 1009);
  await h.shutdown();
});

Deno.test("WebSocketChannel.send() waits on bufferedAmount and frees everything when the reader vanishes", async () => {
  const h = serve({ highWaterMark: 256 * 1024 });
  const conn = await stalledClient(
    Number(new URL(h.url).port),
    "GET / HTTP/1.1\r\nHost: x\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n" +
      "Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n\r\n",
  );
  const channel = await h.channel();
  const chunk = "z".repeat(16 * 1024);
  let accepted = 0;
  let pending: Promise<void> | undefined;
  while (accepted < 10_000) {
    const sent = channel.sendText(chunk);
    const done = await Promise.race([
      sent.then(() => true),
      new Promise<false>((r) => setTimeout(() => r(false), 50)),
    ]);
    if (!done) {
      pending = sent;
      break;
    }
    accepted++;
  }
  assert.ok(pending, "send() waits once the peer stops reading");
  assert.ok(accepted * chunk.length < 32 * 1024 * 1024, `accepted ${accepted} sends`);
  conn.close();
  await assert.rejects(pending, WebSocketClosedError);
  assert.equal((await channel.closed).byServer, false);
  assert.equal(channel.signal.aborted, true);
  await h.shutdown();
});
