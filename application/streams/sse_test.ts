import assert from "node:assert/strict";
import { ManualClock } from "@fw/runtime";
import { encodeSseEvent, SseStream } from "./sse.ts";
import { SseReader, stalledClient, until } from "../testdata/stream_clients.ts";

Deno.test("encodeSseEvent() writes event, id and retry before the data", () => {
  assert.equal(
    encodeSseEvent('{"a":1}', { event: "tick", id: "9", retry: 2500 }),
    'event: tick\nid: 9\nretry: 2500\ndata: {"a":1}\n\n',
  );
});

Deno.test("encodeSseEvent() splits multi-line data into data lines", () => {
  assert.equal(
    encodeSseEvent("one\r\ntwo\rthree\nfour"),
    "data: one\ndata: two\ndata: three\ndata: four\n\n",
  );
  assert.equal(encodeSseEvent(""), "data: \n\n");
});

Deno.test("encodeSseEvent() rejects ids and event names with line breaks", () => {
  assert.throws(() => encodeSseEvent("x", { id: "1\n2" }), /Invalid SSE id "1\\n2"/);
  assert.throws(() => encodeSseEvent("x", { event: "a\rb" }), /Invalid SSE event name/);
});

Deno.test("SseStream numbers events from 1 and continues after a numeric Last-Event-ID", async () => {
  const fresh = new SseStream({ heartbeatMs: 0 });
  const res = fresh.response();
  await fresh.send({ n: 1 });
  await fresh.send({ n: 2 }, { event: "note" });
  fresh.close();
  assert.equal(await res.text(), 'id: 1\ndata: {"n":1}\n\nevent: note\nid: 2\ndata: {"n":2}\n\n');

  const resumed = new SseStream({ heartbeatMs: 0, lastEventId: "41" });
  assert.equal(resumed.lastId, "41");
  const body = resumed.response();
  await resumed.send("a");
  await resumed.send("b", { id: 100 });
  await resumed.send("c");
  await resumed.send("d", { id: "custom" });
  resumed.close();
  const ids = (await body.text()).match(/^id: .*$/gm);
  assert.deepEqual(ids, ["id: 42", "id: 100", "id: 101", "id: custom"]);
  assert.equal(resumed.lastId, "custom");
});

Deno.test("SseStream ignores a Last-Event-ID that is not a number", async () => {
  const stream = new SseStream({ heartbeatMs: 0, lastEventId: "abc" });
  const res = stream.response();
  await stream.send(1);
  stream.close();
  assert.equal(await res.text(), "id: 1\ndata: 1\n\n");
});

Deno.test("SseStream writes retry first and sets the event-stream headers", async () => {
  const stream = new SseStream({ heartbeatMs: 0, retryMs: 3000 });
  const res = stream.response({ "x-extra": "1" });
  stream.close();
  assert.equal(res.status, 200);
  assert.equal(res.headers.get("cache-control"), "no-cache");
  assert.equal(res.headers.get("x-extra"), "1");
  assert.equal(await res.text(), "retry: 3000\n\n");
});

Deno.test("SseStream sends a heartbeat comment every interval of the injected clock", async () => {
  const clock = new ManualClock(0);
  const stream = new SseStream({ clock, heartbeatMs: 15_000 });
  const reader = new SseReader(stream.response());
  await clock.advance(14_999);
  await stream.send({ first: true });
  assert.deepEqual(await reader.next(), { id: "1", data: '{"first":true}' });
  await clock.advance(1);
  assert.deepEqual(await reader.next(), { comment: "ping" });
  await clock.advance(15_000);
  assert.deepEqual(await reader.next(), { comment: "ping" });
  assert.equal(clock.pending, 1);
  await reader.cancel();
  assert.equal(clock.pending, 0, "the heartbeat timer is cleared when the client leaves");
});

Deno.test("SseStream turns heartbeats off with heartbeatMs 0", () => {
  const clock = new ManualClock(0);
  const stream = new SseStream({ clock, heartbeatMs: 0 });
  assert.equal(clock.pending, 0);
  stream.destroy();
});

Deno.test("SseStream aborts its signal and rejects sends once the client disconnects", async () => {
  const clock = new ManualClock(0);
  const stream = new SseStream({ clock });
  const reader = new SseReader(stream.response());
  await stream.send("x");
  await reader.next();
  await reader.cancel();
  assert.equal(stream.signal.aborted, true);
  assert.equal(stream.closed, true);
  await assert.rejects(stream.send("y"), { name: "AbortError" });
  await stream.done;
  assert.equal(clock.pending, 0);
});

Deno.test("SseStream.send() waits once the queue passes the high-water mark", async () => {
  const stream = new SseStream({ heartbeatMs: 0, highWaterMark: 100 });
  const reader = stream.readable.getReader();
  const payload = "x".repeat(40);
  await stream.send(payload); // ~55 characters queued
  let settled = false;
  const second = stream.send(payload).then(() => settled = true); // ~110: over the mark
  await new Promise((r) => setTimeout(r, 5));
  assert.equal(settled, false, "send waits while the client has not read");
  const { value } = await reader.read();
  const text = new TextDecoder().decode(value);
  assert.match(text, /^id: 1\n.*\n\nid: 2\n/s, "one read takes every queued event");
  await second;
  assert.equal(settled, true);
  await reader.cancel();
});

Deno.test("SseStream.send() rejects sends that were not awaited far beyond the mark", async () => {
  const stream = new SseStream({ heartbeatMs: 0, highWaterMark: 10 });
  const pending: Promise<void>[] = [];
  for (let i = 0; i < 20; i++) pending.push(stream.send(i).catch(() => {}));
  await assert.rejects(stream.send("more"), { name: "RangeError", message: /SSE queue is full/ });
  stream.destroy();
  await Promise.all(pending);
});

Deno.test("SseStream.close() delivers queued events, then ends the body", async () => {
  const stream = new SseStream({ heartbeatMs: 0 });
  const res = stream.response();
  void stream.send(1);
  void stream.send(2);
  stream.close();
  assert.equal(stream.closed, true);
  await assert.rejects(stream.send(3), { name: "AbortError" });
  assert.equal(await res.text(), "id: 1\ndata: 1\n\nid: 2\ndata: 2\n\n");
  await stream.done;
  assert.equal(stream.signal.aborted, true);
});

Deno.test("SseStream.destroy() errors the body and rejects waiting sends", async () => {
  const stream = new SseStream({ heartbeatMs: 0, highWaterMark: 1 });
  const res = stream.response();
  const waiting = stream.send("held");
  stream.destroy(new Error("stopping"));
  await assert.rejects(waiting, /stopping/);
  await assert.rejects(res.text(), /stopping/);
});

Deno.test("SseStream rejects a negative heartbeat and a zero high-water mark", () => {
  assert.throws(() => new SseStream({ heartbeatMs: -1 }), /"heartbeatMs": expected >= 0/);
  assert.throws(() => new SseStream({ highWaterMark: 0 }), /"highWaterMark": expected >= 1/);
});

Deno.test("SseStream over Deno.serve: a vanished client aborts the stream and frees it", async () => {
  const clock = new ManualClock(0);
  let stream: SseStream | undefined;
  const server = Deno.serve({ port: 0, hostname: "127.0.0.1", onListen() {} }, () => {
    stream = new SseStream({ clock });
    return stream.response();
  });
  const ac = new AbortController();
  const res = await fetch(`http://127.0.0.1:${server.addr.port}/`, { signal: ac.signal });
  const reader = new SseReader(res);
  await stream!.send({ hello: "world" });
  assert.deepEqual(await reader.nextEvent(), { id: "1", data: '{"hello":"world"}' });
  ac.abort();
  await reader.cancel();
  await stream!.done;
  assert.equal(stream!.signal.aborted, true);
  assert.equal(clock.pending, 0);
  await server.shutdown();
});

Deno.test("SseStream over Deno.serve: a client that never reads bounds what the server holds", async () => {
  let stream: SseStream | undefined;
  const server = Deno.serve({ port: 0, hostname: "127.0.0.1", onListen() {} }, () => {
    stream = new SseStream({ heartbeatMs: 0, highWaterMark: 16 * 1024 });
    return stream.response();
  });
  const conn = await stalledClient(
    server.addr.port,
    "GET / HTTP/1.1\r\nHost: x\r\nAccept: text/event-stream\r\n\r\n",
  );
  await until(() => stream !== undefined, "the stream");
  const chunk = "y".repeat(8 * 1024);
  let accepted = 0;
  let blocked = false;
  // Send until a send stays pending: the socket buffers fill and the queue reaches its mark.
  while (!blocked && accepted < 10_000) {
    const sent = stream!.send(chunk).then(() => true);
    const result = await Promise.race([
      sent,
      new Promise<false>((r) => setTimeout(() => r(false), 20)),
    ]);
    if (result) accepted++;
    else {
      blocked = true;
      sent.catch(() => {});
    }
  }
  assert.equal(blocked, true, "send() blocks when the client does not read");
  // kernel socket buffers + Deno's 64 KiB body channel + our 16 KiB queue: well under 10 000 sends
  assert.ok(accepted * chunk.length < 32 * 1024 * 1024, `accepted ${accepted} sends`);
  conn.close();
  await stream!.done;
  assert.equal(stream!.signal.aborted, true);
  await server.shutdown();
});
