/**
 * Internal to the NATS JetStream client: the {@linkcode CloudMessage} it hands to the cloud
 * transport for each received message, and the set of messages in hand that the lease keeps
 * alive.
 *
 * Per message it does only what the transport reads: the delivery count is read straight from the
 * ack subject (no split into tokens, no info object), fw's mark is read from the header bytes (the
 * client would decode every header into a map of arrays first), the attributes and the engine id
 * are built only when asked (a foreign message, a dead letter), and ack and nack are methods (no
 * closures per message).
 *
 * @module
 */

import type { JsMsg } from "@nats-io/jetstream";
import type { MsgHdrs } from "@nats-io/transport-node";
import type { CloudMessage } from "./client.ts";

/** What a received message settles through: the client, one object for all its messages. */
export interface NatsSettler {
  /** The messages in hand (leased while handled). */
  readonly inFlight: InFlight;
  /** Queues the ack of a message (sent with the others of the event-loop turn). */
  ack(m: JsMsg): void;
}

function decode(text: string): string {
  try {
    return decodeURIComponent(text);
  } catch {
    return text;
  }
}

/** The attributes of a message: its headers but `Nats-*`, percent-decoded. */
export function fromHeaders(h: MsgHdrs | undefined): Record<string, string> {
  const out: Record<string, string> = {};
  if (!h) return out;
  for (const k of h.keys()) {
    if (k.startsWith("Nats-")) continue;
    const v = h.get(k);
    // Only text that encodeURIComponent escaped has a "%" to decode.
    out[k.includes("%") ? decode(k) : k] = v.includes("%") ? decode(v) : v;
  }
  return out;
}

/**
 * The delivery count of a JetStream message, read from its ack subject:
 * `$JS.ACK.<domain>.<account>.<stream>.<consumer>.<count>.<stream seq>.<delivery seq>.<time>.<pending>[.<token>]`
 * or, from servers before 2.9, `$JS.ACK.<stream>.<consumer>.<count>.<...>` (9 tokens). Anything
 * else (or a client without the `reply` of its messages) goes through the client's own parser.
 */
export function deliveryCount(m: JsMsg): number {
  const s = (m as { reply?: unknown }).reply;
  if (typeof s === "string" && s.startsWith("$JS.ACK.")) {
    // the dots before and after the count token, for both layouts
    let dots = 0, old = -1, oldEnd = -1, cur = -1, curEnd = -1;
    for (let i = s.indexOf("."); i !== -1; i = s.indexOf(".", i + 1)) {
      dots++;
      if (dots === 4) old = i;
      else if (dots === 5) oldEnd = i;
      else if (dots === 6) cur = i;
      else if (dots === 7) curEnd = i;
    }
    const [from, to] = dots === 8 ? [old, oldEnd] : dots >= 10 ? [cur, curEnd] : [-1, -1];
    if (from !== -1 && to > from + 1) {
      let n = 0;
      for (let i = from + 1; i < to; i++) {
        const d = s.charCodeAt(i) - 48;
        if (d < 0 || d > 9) return m.info.deliveryCount;
        n = n * 10 + d;
      }
      return n;
    }
  }
  return m.info.deliveryCount;
}

const encoder = new TextEncoder();
/** Each header name looked up, as the bytes `\r\n<name>:` (a name is looked up every message). */
const needles = new Map<string, Uint8Array>();

/**
 * The first value of header `name` read straight from the header bytes of a message
 * (`NATS/1.0\r\n<name>: <value>\r\n...`), as the client's decoder would read it: the name
 * exact, the value trimmed. `null` when the bytes are not reachable or the value is not plain
 * ASCII: the caller asks the client then. The bytes are an internal of `@nats-io/nats-core` 3
 * (`msg._rdata`, headers up to `msg._msg.hdr`), checked before use.
 */
export function rawHeader(m: JsMsg, name: string): string | undefined | null {
  const inner = (m as { msg?: { _rdata?: unknown; _msg?: { hdr?: unknown } } }).msg;
  const bytes = inner?._rdata, end = inner?._msg?.hdr;
  if (!(bytes instanceof Uint8Array) || typeof end !== "number" || end > bytes.length) return null;
  if (end < 0) return undefined; // no headers
  // "NATS/": a header block
  if (bytes[0] !== 78 || bytes[1] !== 65 || bytes[2] !== 84 || bytes[3] !== 83 || bytes[4] !== 47) {
    return null;
  }
  let needle = needles.get(name);
  if (needle === undefined) {
    if (needles.size > 64) needles.clear();
    needles.set(name, needle = encoder.encode(`\r\n${name}:`));
  }
  const last = end - needle.length;
  outer: for (let i = 5; i <= last; i++) {
    for (let j = 0; j < needle.length; j++) if (bytes[i + j] !== needle[j]) continue outer;
    let from = i + needle.length, to = from;
    while (to < end && bytes[to] !== 13) {
      const b = bytes[to];
      if (b > 126 || (b < 32 && b !== 9)) return null; // the client's decoder's business
      to++;
    }
    if (to < end && bytes[to + 1] !== 10) return null;
    while (from < to && (bytes[from] === 32 || bytes[from] === 9)) from++;
    while (to > from && (bytes[to - 1] === 32 || bytes[to - 1] === 9)) to--;
    let value = "";
    for (let k = from; k < to; k++) value += String.fromCharCode(bytes[k]);
    return value;
  }
  return undefined;
}

/** One received message. */
export class NatsMessage implements CloudMessage {
  /** 1-based delivery count. */
  readonly deliveryAttempt: number;
  /** Internal: its index in {@linkcode InFlight}, or -1. */
  _slot = -1;
  readonly #m: JsMsg;
  readonly #settler: NatsSettler;
  #attributes: Record<string, string> | undefined;
  #settled = false;

  constructor(m: JsMsg, settler: NatsSettler) {
    this.#m = m;
    this.#settler = settler;
    this.deliveryAttempt = deliveryCount(m);
  }

  /** `<stream>:<stream sequence>`. */
  get id(): string {
    return `${this.#m.info.stream}:${this.#m.seq}`;
  }

  /** The body. */
  get data(): Uint8Array {
    return this.#m.data;
  }

  /** Every attribute (built on first read). */
  get attributes(): Readonly<Record<string, string>> {
    return this.#attributes ??= fromHeaders(this.#m.headers);
  }

  /** One attribute, without building the map of all of them. */
  attribute(name: string): string | undefined {
    if (this.#attributes) return this.#attributes[name];
    const key = encodeURIComponent(name);
    const raw = rawHeader(this.#m, key);
    if (raw !== null) return raw?.includes("%") ? decode(raw) : raw;
    const h = this.#m.headers;
    if (!h) return undefined;
    if (!h.has(key)) return undefined;
    const v = h.get(key);
    return v.includes("%") ? decode(v) : v;
  }

  /** The client's message (for the lease). */
  get msg(): JsMsg {
    return this.#m;
  }

  /** Acknowledges it (with the others of this event-loop turn). Settles once. */
  ack(): void {
    if (this.#settled) return;
    this.#settled = true;
    this.#settler.inFlight.remove(this);
    this.#settler.ack(this.#m);
  }

  /** Asks for a redelivery, after `delayMs` when given. Settles once. */
  nack(delayMs?: number): void {
    if (this.#settled) return;
    this.#settled = true;
    this.#settler.inFlight.remove(this);
    this.#m.nak(delayMs && delayMs > 0 ? delayMs : undefined);
  }
}

/** The messages in hand: an array with swap removal (no hash per message, as a `Set` needs). */
export class InFlight {
  #items: NatsMessage[] = [];

  /** How many. */
  get size(): number {
    return this.#items.length;
  }

  /** Adds a message. */
  add(m: NatsMessage): void {
    m._slot = this.#items.length;
    this.#items.push(m);
  }

  /** Removes a message (once; later calls do nothing). */
  remove(m: NatsMessage): void {
    const i = m._slot;
    if (i < 0) return;
    m._slot = -1;
    const last = this.#items.pop()!;
    if (last !== m) {
      this.#items[i] = last;
      last._slot = i;
    }
  }

  /** Tells the server each message is still being worked on. */
  working(): void {
    for (const m of this.#items) m.msg.working();
  }

  /** Forgets every message. */
  clear(): void {
    for (const m of this.#items) m._slot = -1;
    this.#items = [];
  }
}
