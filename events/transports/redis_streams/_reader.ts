/**
 * Internal to the Redis Streams transport: one subscription's reader. It owns a dedicated
 * connection for `XREADGROUP ... BLOCK` over two streams, the topic stream and the group's retry
 * stream, and hands each entry to the consumer as a {@linkcode Delivery}:
 *
 * - `ack()` is an `XACK` (batched with the other acks of the same turn of the event loop; on the
 *   retry stream, `XACK` + `XDEL` in one script);
 * - `retry(delay)` acknowledges the entry and adds it to the group's delayed-retry set with the
 *   next attempt and its due time, in one script; the mover puts due retries on the retry stream
 *   (`_retry.ts`);
 * - a refused delivery (queue full) is scheduled the same way a second later, attempt unchanged.
 *
 * While it delivers a batch of new entries, the read of the next batch is already out (when
 * `prefetch` leaves room for it): Redis serves it while the handlers run. The deliveries it holds
 * unsettled form a list linked through them (holding and settling one touches a few fields).
 *
 * After a start, a reconnect or an error, it reads its own pending entries first (`0` instead
 * of `>`), skipping those still running here. Every third of the claim idle time it refreshes the
 * idle time of the entries it holds (`XCLAIM ... JUSTID`) and takes over, with `XAUTOCLAIM` (its
 * cursor carried from call to call), entries another consumer of the group has held longer than
 * the handler's `timeout` plus `claimGraceMs`: they are scheduled again as the next attempt.
 *
 * @module
 */

import type { Clock, Logger, TimerHandle } from "@fw/runtime";
import type { RedisClient } from "../../_redis.ts";
import { sendCommandAt } from "../../_redis_cluster.ts";
import type { Envelope } from "../../envelope.ts";
import type { Admission, Delivery, DeliveryListener, SubscriptionSpec } from "../../transport.ts";
import { decodeEntry, keys, redisGroup } from "./_keys.ts";
import { settleBy } from "./_deadline.ts";
import { ACK_DELETE, RETRY } from "./_scripts.ts";
import { RetryMover } from "./_retry.ts";

/** What a reader needs. */
export interface ReaderOptions {
  readonly spec: SubscriptionSpec;
  readonly listener: DeliveryListener;
  /** The dedicated connection for blocking reads. */
  readonly conn: RedisClient;
  /** The shared connection for acks, retries and claims. */
  readonly main: RedisClient;
  readonly prefix: string;
  readonly clock: Clock;
  readonly logger?: Logger;
  readonly prefetch: number;
  readonly batch: number;
  readonly blockMs: number;
  readonly retryPoll: number;
  /** Idle time after which another consumer's entry is taken over. */
  readonly claimIdle: number;
}

/** How many entries an `XREADGROUP` reply holds (over its streams). */
function entriesIn(reply: unknown): number {
  if (!Array.isArray(reply)) return 0;
  let n = 0;
  for (const streamReply of reply) {
    const entries = streamReply?.[1];
    if (Array.isArray(entries)) n += entries.length;
  }
  return n;
}

/**
 * Resolves after the Redis client's pending writes went out: node-redis writes the commands of a
 * turn in one `setImmediate`, and immediates run in the order they were set.
 */
function afterWrites(): Promise<void> {
  return new Promise((resolve) => setImmediate(resolve));
}

/** How long a refused delivery (queue full) waits before it is offered again. */
const REFUSED_RETRY_MS = 1000;

let unique = 0;

class RedisDelivery implements Delivery {
  done = false;
  /** Neighbours in the reader's list of the deliveries it holds ({@linkcode Held}). */
  prev: RedisDelivery | undefined = undefined;
  next: RedisDelivery | undefined = undefined;
  constructor(
    readonly reader: Reader,
    readonly id: string,
    /** 0: topic stream, 1: retry stream. */
    readonly source: 0 | 1,
    readonly envelope: Envelope,
    readonly attempt: number,
    readonly raw: string | undefined,
    readonly problem: string | undefined,
  ) {}
  ack(): Promise<void> {
    return this.reader.ack(this);
  }
  retry(delayMs: number): Promise<void> {
    return this.reader.retry(this, delayMs, this.attempt + 1);
  }
}

/**
 * The deliveries of one stream a reader holds unsettled, in the order they were handed out: a
 * list linked through the deliveries themselves, so that holding and settling one costs a few
 * field writes instead of a hash-map insert and delete per message. Lookups by entry id are only
 * needed after a reconnect and when claiming.
 */
class Held {
  first: RedisDelivery | undefined = undefined;
  last: RedisDelivery | undefined = undefined;
  size = 0;

  add(d: RedisDelivery): void {
    d.prev = this.last;
    d.next = undefined;
    if (this.last === undefined) this.first = d;
    else this.last.next = d;
    this.last = d;
    this.size++;
  }

  remove(d: RedisDelivery): void {
    const { prev, next } = d;
    if (prev === undefined) this.first = next;
    else prev.next = next;
    if (next === undefined) this.last = prev;
    else next.prev = prev;
    d.prev = d.next = undefined;
    this.size--;
  }

  /** Whether the entry `id` is held (a walk through the list: for the rare paths only). */
  has(id: string): boolean {
    for (let d = this.first; d !== undefined; d = d.next) if (d.id === id) return true;
    return false;
  }

  /** The entry ids held, in order. */
  ids(): string[] {
    const out: string[] = [];
    for (let d = this.first; d !== undefined; d = d.next) out.push(d.id);
    return out;
  }
}

interface AckBatch {
  ids: string[];
  done: Promise<void>;
}

/** Reads one subscription's streams and delivers to its listener. */
export class Reader {
  readonly #o: ReaderOptions;
  readonly #group: string;
  readonly #streams: readonly [string, string];
  readonly #inflight: readonly [Held, Held] = [new Held(), new Held()];
  readonly #acks: [AckBatch | undefined, AckBatch | undefined] = [undefined, undefined];
  readonly #mover: RetryMover;
  /** Read cursors of the history reads (0, 1) and the XAUTOCLAIM cursors (2, 3). */
  readonly #cursors = ["0-0", "0-0", "0-0", "0-0"];
  #room: (() => void) | undefined;
  #resumeAt = 0;
  #clientId: string | undefined;
  #claimTimer: TimerHandle | undefined;
  /** Ends the back-off pause of the read loop early (on close). */
  #wake: (() => void) | undefined;
  #closed = false;
  /** Resolves when the read loop has ended. */
  done: Promise<void> = Promise.resolve();

  constructor(options: ReaderOptions) {
    this.#o = options;
    const { spec, prefix } = options;
    this.#group = redisGroup(spec);
    this.#streams = [
      keys.stream(prefix, spec.topic),
      keys.retries(prefix, spec.topic, this.#group),
    ];
    this.#mover = new RetryMover({
      main: options.main,
      delayed: keys.delayed(prefix, spec.topic, this.#group),
      retries: this.#streams[1],
      clock: options.clock,
      poll: options.retryPoll,
      logger: options.logger,
    });
  }

  /** Starts the read loop, the retry mover and the claim timer. */
  start(): void {
    this.done = this.#run();
  }

  /** Creates the Redis groups (new ones start at the end of the topic stream). */
  async ensureGroups(client: RedisClient = this.#o.main): Promise<void> {
    const [topic, retries] = this.#streams;
    for (const [stream, start] of [[topic, "$"], [retries, "0"]]) {
      try {
        await client.sendCommand(["XGROUP", "CREATE", stream, this.#group, start, "MKSTREAM"]);
      } catch (err) {
        if (!String((err as Error)?.message).startsWith("BUSYGROUP")) throw err;
      }
    }
  }

  /** Deliveries this reader holds unsettled. */
  get held(): number {
    return this.#inflight[0].size + this.#inflight[1].size;
  }

  async #run(): Promise<void> {
    const o = this.#o;
    this.#mover.start();
    this.#armClaim();
    let history = true;
    let failures = 0;
    let needGroups = false;
    /** The next new-entries read, sent before the entries of the last one were delivered. */
    let next: Promise<unknown> | undefined;
    while (!this.#closed) {
      try {
        if (needGroups) {
          await this.ensureGroups(o.conn);
          needGroups = false;
        }
        if (this.#clientId === undefined) {
          // On a cluster: the connection to the node that serves this topic's slot.
          this.#clientId = String(
            await sendCommandAt(o.conn, this.#streams[0], ["CLIENT", "ID"]),
          );
        }
        const room = o.prefetch - this.held;
        if (room <= 0) {
          // Resume once a read can be a useful batch again, not after every single ack.
          this.#resumeAt = o.prefetch - Math.max(1, Math.min(o.batch, o.prefetch >> 1));
          await new Promise<void>((resolve) => this.#room = resolve);
          continue;
        }
        const count = String(Math.min(o.batch, room));
        const [s0, s1] = this.#streams;
        if (history) {
          const reply = await o.conn.sendCommand([
            "XREADGROUP",
            "GROUP",
            this.#group,
            o.spec.instanceId,
            "COUNT",
            count,
            "STREAMS",
            s0,
            s1,
            this.#cursors[0],
            this.#cursors[1],
          ]); // deno-fmt-ignore
          if (this.#closed) break;
          history = this.#receive(reply, true) > 0;
        } else {
          const reply = await (next ?? this.#readNew(count));
          next = undefined;
          if (this.#closed) break;
          // With room left for another batch, the next read goes out before this one's entries
          // are delivered: Redis serves it while they run, instead of after the last of them
          // (the client writes on its next turn, which would otherwise come after every handler
          // that finishes without waiting on I/O).
          const got = entriesIn(reply);
          const free = o.prefetch - this.held - got;
          if (got > 0 && free > 0) {
            next = this.#readNew(String(Math.min(o.batch, free)));
            next.catch(() => {}); // awaited on the next turn of the loop
            await afterWrites();
            if (this.#closed) break;
          }
          this.#receive(reply, false);
        }
        failures = 0;
      } catch (err) {
        next = undefined;
        if (this.#closed) break;
        const message = String((err as Error)?.message ?? err);
        if (message.includes("NOGROUP")) needGroups = true;
        history = true;
        this.#cursors[0] = this.#cursors[1] = "0-0";
        this.#clientId = undefined;
        failures++;
        const wait = Math.min(50 * 2 ** Math.min(failures, 6), 2000);
        if (failures === 1 || failures % 10 === 0) {
          o.logger?.warn("redis streams: read failed; retrying", {
            topic: o.spec.topic,
            group: o.spec.group,
            error: message,
            retryInMs: wait,
          });
        }
        await new Promise<void>((resolve) => {
          const timer = setTimeout(resolve, wait);
          this.#wake = () => {
            clearTimeout(timer);
            resolve();
          };
        });
        this.#wake = undefined;
      }
    }
  }

  /** Reads up to `count` new entries of both streams, blocking up to `blockMs`. */
  #readNew(count: string): Promise<unknown> {
    const [s0, s1] = this.#streams;
    return this.#o.conn.sendCommand([
      "XREADGROUP",
      "GROUP",
      this.#group,
      this.#o.spec.instanceId,
      "COUNT",
      count,
      "BLOCK",
      String(this.#o.blockMs),
      "STREAMS",
      s0,
      s1,
      ">",
      ">",
    ]); // deno-fmt-ignore
  }

  /** Delivers a reply's entries; returns how many it held (history reads: to know when done). */
  #receive(reply: unknown, history: boolean): number {
    if (!Array.isArray(reply)) return 0;
    let n = 0;
    // The ids held when this history read began, per stream (built on first use).
    const held: [Set<string> | undefined, Set<string> | undefined] = [undefined, undefined];
    for (const streamReply of reply) {
      const source: 0 | 1 = streamReply?.[0] === this.#streams[0] ? 0 : 1;
      const entries = streamReply?.[1];
      if (!Array.isArray(entries)) continue;
      for (const raw of entries) {
        if (!history) {
          // The common shape, `[id, ["e", json]]`, read without building a StreamEntry.
          const fields = raw?.[1];
          if (
            Array.isArray(fields) && fields.length === 2 && typeof raw[0] === "string" &&
            fields[0] === "e" && typeof fields[1] === "string"
          ) {
            n++;
            this.#deliver(raw[0], fields[1], 1, source);
            continue;
          }
        }
        const entry = decodeEntry(raw);
        if (!entry) continue;
        n++;
        if (history) {
          this.#cursors[source] = entry.id;
          const ids = held[source] ??= new Set(this.#inflight[source].ids());
          if (ids.has(entry.id)) continue;
          if (raw[1] === null) {
            // Deleted while pending (never by fw): nothing to deliver.
            this.#o.main.sendCommand(["XACK", this.#streams[source], this.#group, entry.id])
              .catch(() => {});
            continue;
          }
        }
        this.#deliver(entry.id, entry.raw, entry.attempt, source);
      }
    }
    return n;
  }

  #deliver(id: string, raw: string | undefined, attempt: number, source: 0 | 1): void {
    let envelope: unknown;
    let problem: string | undefined;
    if (raw === undefined) {
      envelope = {};
      problem = 'the stream entry has no "e" field';
    } else {
      try {
        envelope = JSON.parse(raw);
      } catch (err) {
        envelope = raw;
        problem = `the stream entry is not JSON: ${(err as Error).message}`;
      }
    }
    const d = new RedisDelivery(this, id, source, envelope as Envelope, attempt, raw, problem);
    this.#inflight[source].add(d);
    let admission: Admission;
    try {
      admission = this.#o.listener(d);
    } catch (err) {
      this.#o.logger?.error("redis streams: the subscriber threw", { error: err });
      admission = "rejected";
    }
    if (admission === "accepted") return;
    if (admission === "dropped") {
      if (!d.done) void this.ack(d).catch(() => {});
      return;
    }
    if (!d.done) {
      void this.retry(d, REFUSED_RETRY_MS, d.attempt).catch((err) =>
        this.#o.logger?.error("redis streams: could not reschedule a refused delivery", {
          error: err,
        })
      );
    }
  }

  #settled(d: RedisDelivery): boolean {
    if (d.done) return false;
    d.done = true;
    this.#inflight[d.source].remove(d);
    const room = this.#room;
    if (room && this.held <= this.#resumeAt) {
      this.#room = undefined;
      room();
    }
    return true;
  }

  /** Acknowledges (batched per turn of the event loop). */
  ack(d: RedisDelivery): Promise<void> {
    if (!this.#settled(d)) return Promise.resolve();
    const source = d.source;
    let batch = this.#acks[source];
    if (!batch) {
      const ids: string[] = [];
      batch = this.#acks[source] = {
        ids,
        done: new Promise<void>((resolve) => setTimeout(resolve, 0)).then(() => {
          this.#acks[source] = undefined;
          return this.#flush(source, ids);
        }),
      };
    }
    batch.ids.push(d.id);
    return batch.done;
  }

  async #flush(source: 0 | 1, ids: string[]): Promise<void> {
    const stream = this.#streams[source];
    for (let i = 0; i < ids.length; i += 1000) {
      const chunk = ids.slice(i, i + 1000);
      if (source === 0) {
        await this.#o.main.sendCommand(["XACK", stream, this.#group, ...chunk]);
      } else {
        await ACK_DELETE.run(this.#o.main, [stream], [this.#group, ...chunk]);
      }
    }
  }

  /** Acknowledges and schedules attempt `attempt` after `delayMs`, in one script. */
  async retry(d: RedisDelivery, delayMs: number, attempt: number): Promise<void> {
    if (!this.#settled(d)) return;
    const due = this.#o.clock.now() + Math.max(0, delayMs);
    const body = d.raw ?? JSON.stringify(d.envelope);
    const member = `${attempt}|${Date.now().toString(36)}${(++unique).toString(36)}${
      Math.random().toString(36).slice(2, 8)
    }|${body}`;
    await RETRY.run(this.#o.main, [this.#streams[d.source], this.#mover.delayed], [
      this.#group,
      d.id,
      String(due),
      member,
      d.source === 1 ? "1" : "0",
    ]);
    this.#mover.arm(due);
  }

  #armClaim(): void {
    const every = Math.max(100, Math.floor(this.#o.claimIdle / 3));
    this.#claimTimer = this.#o.clock.setTimeout(() => {
      this.#claimTimer = undefined;
      this.#claimAndTouch().catch((err) => {
        if (!this.#closed) {
          this.#o.logger?.warn("redis streams: claiming failed", { error: String(err) });
        }
      }).finally(() => {
        if (!this.#closed) this.#armClaim();
      });
    }, every);
  }

  /** Refreshes what this reader holds, then takes over what others held too long. */
  async #claimAndTouch(): Promise<void> {
    const o = this.#o;
    const me = o.spec.instanceId;
    for (const source of [0, 1] as const) {
      const stream = this.#streams[source];
      const held = this.#inflight[source].ids();
      for (let i = 0; i < held.length; i += 500) {
        await o.main.sendCommand([
          "XCLAIM",
          stream,
          this.#group,
          me,
          "0",
          ...held.slice(i, i + 500),
          "JUSTID",
        ]); // deno-fmt-ignore
      }
      const reply = await o.main.sendCommand([
        "XAUTOCLAIM",
        stream,
        this.#group,
        me,
        String(o.claimIdle),
        this.#cursors[source + 2] ?? "0-0",
        "COUNT",
        String(o.batch),
      ]) as unknown[]; // deno-fmt-ignore
      this.#cursors[source + 2] = String(reply?.[0] ?? "0-0");
      for (const raw of (reply?.[1] ?? []) as unknown[]) {
        const entry = decodeEntry(raw);
        if (!entry || this.#inflight[source].has(entry.id)) continue;
        o.logger?.warn("redis streams: took over a delivery from a consumer that stopped", {
          topic: o.spec.topic,
          group: o.spec.group,
          entry: entry.id,
          attempt: entry.attempt + 1,
        });
        const body = entry.raw ?? "{}";
        const d = new RedisDelivery(
          this,
          entry.id,
          source,
          {} as Envelope,
          entry.attempt,
          body,
          "",
        );
        this.#inflight[source].add(d);
        await this.retry(d, 0, entry.attempt + 1);
      }
    }
  }

  /**
   * Stops reading (deliveries already handed out can still be settled): unblocks the blocking
   * read and waits for the read loop to end, until the instant `end` at the latest. A read waiting
   * in the offline queue of a connection that is down ends once that connection is closed.
   *
   * @param end `performance.now()` instant after which it stops waiting for Redis.
   * @returns `true` when the read loop has ended.
   */
  async close(end: number): Promise<boolean> {
    if (!this.#closed) {
      this.#closed = true;
      this.#mover.stop();
      if (this.#claimTimer !== undefined) this.#o.clock.clearTimeout(this.#claimTimer);
      this.#room?.();
      this.#wake?.();
      if (this.#clientId !== undefined) {
        await settleBy(
          sendCommandAt(this.#o.main, this.#streams[0], ["CLIENT", "UNBLOCK", this.#clientId]),
          end,
        );
      }
    }
    return await settleBy(this.done, end);
  }

  /**
   * Waits for acks in flight, until the instant `end` at the latest.
   *
   * @returns `true` when they have all been answered.
   */
  flush(end: number): Promise<boolean> {
    return settleBy(Promise.all(this.#acks.map((b) => b?.done)), end);
  }
}
