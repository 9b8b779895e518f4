import assert from "node:assert/strict";
import type { JsMsg } from "@nats-io/jetstream";
import { headers } from "@nats-io/transport-node";
import {
  deliveryCount,
  InFlight,
  NatsMessage,
  type NatsSettler,
  rawHeader,
} from "./_nats_message.ts";

/** A message with an ack subject, whose `info` is the client's reading of it. */
function msg(reply: string, parsed = 99): JsMsg {
  return { reply, info: { deliveryCount: parsed } } as unknown as JsMsg;
}

Deno.test("deliveryCount() reads the count from both ack subject layouts", () => {
  // nats-server 2.9+: domain, account hash, ..., and a random token at the end
  assert.equal(
    deliveryCount(msg("$JS.ACK._.ACCHASH.FW_EVENTS.orders_1a2b.3.17.9.1700000000.0.Xy1")),
    3,
  );
  // without the random token
  assert.equal(
    deliveryCount(msg("$JS.ACK._.ACCHASH.FW_EVENTS.orders_1a2b.12.17.9.1700000000.0")),
    12,
  );
  // servers before 2.9: stream and consumer only
  assert.equal(deliveryCount(msg("$JS.ACK.FW_EVENTS.orders_1a2b.1.17.9.1700000000.0")), 1);
});

Deno.test("deliveryCount() leaves any other subject to the client's parser", () => {
  assert.equal(deliveryCount(msg("$JS.ACK.FW_EVENTS.orders.x.17.9.1.0")), 99);
  assert.equal(deliveryCount(msg("_INBOX.abc")), 99);
  assert.equal(deliveryCount(msg("$JS.ACK.a.b.c")), 99);
  assert.equal(deliveryCount({ info: { deliveryCount: 4 } } as unknown as JsMsg), 4);
});

Deno.test("NatsMessage settles once and leaves the in-flight set when it does", () => {
  const inFlight = new InFlight();
  const acked: unknown[] = [];
  const naks: unknown[] = [];
  const settler: NatsSettler = { inFlight, ack: (m) => acked.push(m) };
  const raw = (n: number) =>
    ({
      reply: `$JS.ACK.S.c.1.${n}.${n}.0.0`,
      nak: (d?: number) => naks.push([n, d]),
      working: () => {},
    }) as unknown as JsMsg;
  const a = new NatsMessage(raw(1), settler);
  const b = new NatsMessage(raw(2), settler);
  const c = new NatsMessage(raw(3), settler);
  for (const m of [a, b, c]) inFlight.add(m);
  a.ack();
  a.ack();
  a.nack(5);
  assert.equal(acked.length, 1);
  assert.equal(naks.length, 0);
  assert.equal(inFlight.size, 2);
  c.nack(0);
  assert.deepEqual(naks, [[3, undefined]]);
  assert.equal(inFlight.size, 1);
  b.nack(250);
  assert.deepEqual(naks, [[3, undefined], [2, 250]]);
  assert.equal(inFlight.size, 0);
});

/** The header block as the client sends it (`encode()` of its headers class). */
const encode = (h: unknown) => (h as { encode(): Uint8Array }).encode();

Deno.test("rawHeader() reads a header from the bytes as the client's decoder does", () => {
  const h = headers();
  h.set("fw.envelope", "1");
  h.set("fw.envelope.more", "2");
  h.set("a%20b", "  x%2Fy ");
  h.append("twice", "first");
  h.append("twice", "second");
  h.set("empty", "");
  const block = encode(h);
  const bytes = new Uint8Array(block.length + 3);
  bytes.set(block);
  bytes.set([123, 125, 10], block.length);
  const m = { msg: { _rdata: bytes, _msg: { hdr: block.length } } } as unknown as JsMsg;
  assert.equal(rawHeader(m, "fw.envelope"), "1");
  assert.equal(rawHeader(m, "fw.envelope.more"), "2");
  assert.equal(rawHeader(m, "a%20b"), "x%2Fy");
  assert.equal(rawHeader(m, "twice"), "first");
  assert.equal(rawHeader(m, "empty"), "");
  assert.equal(rawHeader(m, "missing"), undefined);
  assert.equal(rawHeader(m, "fw"), undefined);
  // no header block, and a client whose internals differ
  const none = { msg: { _rdata: bytes, _msg: { hdr: -1 } } } as unknown as JsMsg;
  assert.equal(rawHeader(none, "fw.envelope"), undefined);
  assert.equal(rawHeader({ msg: {} } as unknown as JsMsg, "fw.envelope"), null);
  assert.equal(rawHeader({} as unknown as JsMsg, "fw.envelope"), null);
  const utf8 = headers();
  utf8.set("k", "é");
  const b2 = encode(utf8);
  const m2 = { msg: { _rdata: b2, _msg: { hdr: b2.length } } } as unknown as JsMsg;
  assert.equal(rawHeader(m2, "k"), null);
});
