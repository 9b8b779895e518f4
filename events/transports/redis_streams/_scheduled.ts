/**
 * Internal to the Redis Streams transport: delayed publishes. A delayed message waits in its
 * topic's scheduled set (`<topic>:scheduled`, score = due time in ms, member =
 * `<order>|<envelope JSON>`); a mover puts the due ones on the topic stream in one Lua script, the
 * way retries reach their retry stream (`_retry.ts`), so a delayed message is never lost nor
 * added twice whichever of the subscribing processes moves it. Members due at the same time
 * leave in the order of `<order>` (publish time, then a per-process sequence), so one publisher's
 * messages keep their order.
 *
 * Every process that subscribes to a topic runs its mover: it fires at the earliest due time it
 * knows of (its own publishes, the next due time each move reports) and at least every
 * `SCHEDULED_POLL_MS` to find what other processes published. Nothing is moved while no process
 * subscribes; the set keeps the messages across restarts. Like a plain publish, a message that
 * falls due while its topic has no stream (no group ever subscribed) is dropped.
 *
 * @module
 */

import type { Clock, Logger } from "@fw/runtime";
import type { RedisClient } from "../../_redis.ts";
import type { Envelope } from "../../envelope.ts";
import { keys } from "./_keys.ts";
import { RetryMover } from "./_retry.ts";
import { Script } from "./_scripts.ts";

/** Longest wait before a mover looks for messages other processes delayed. */
export const SCHEDULED_POLL_MS = 250;

/** How far ahead a delayed publish may be due on Redis: 365 days (a sorted-set score holds more). */
export const REDIS_MAX_DELAY_MS = 365 * 24 * 3600 * 1000;

/**
 * Delayed publish. KEYS: scheduled set, [dedupe]. ARGV: dedupe window ms, then pairs of due time
 * and member. Returns how many were added, or -1 for a repeat of the dedupe key.
 */
export const SCHEDULE: Script = new Script(`
if KEYS[2] and not redis.call('SET', KEYS[2], '1', 'NX', 'PX', ARGV[1]) then return -1 end
for i = 2, #ARGV, 2 do redis.call('ZADD', KEYS[1], ARGV[i], ARGV[i + 1]) end
return (#ARGV - 1) / 2
`);

/**
 * Moves due delayed messages to the topic stream (dropped when it has none). KEYS: scheduled set,
 * topic stream. ARGV: now, limit. Returns [moved, next due time or ''].
 */
export const MOVE_SCHEDULED: Script = new Script(`
local due = redis.call('ZRANGEBYSCORE', KEYS[1], '-inf', ARGV[1], 'LIMIT', 0, tonumber(ARGV[2]))
local live = redis.call('EXISTS', KEYS[2]) == 1
for _, m in ipairs(due) do
  local e = string.match(m, '^[^|]*|(.*)$')
  if e and live then redis.call('XADD', KEYS[2], '*', 'e', e) end
  redis.call('ZREM', KEYS[1], m)
end
local nxt = redis.call('ZRANGE', KEYS[1], 0, 0, 'WITHSCORES')
return {#due, nxt[2] or ''}
`);

let order = 0;

/**
 * The scheduled-set member of an envelope.
 *
 * @param envelope The envelope.
 * @param now Publish time (ms).
 * @returns `<order>|<envelope JSON>`.
 */
export function scheduledMember(envelope: Envelope, now: number): string {
  order = (order + 1) % 1e9;
  return `${String(now).padStart(15, "0")}${String(order).padStart(9, "0")}|${
    JSON.stringify(envelope)
  }`;
}

/** What the movers of one transport need. */
export interface ScheduledOptions {
  readonly prefix: string;
  readonly clock: Clock;
  readonly poll: number;
  readonly dedupeWindow: number;
  readonly logger?: Logger;
}

/** Most delayed messages per schedule script call. */
const SCHEDULE_CHUNK = 500;

/** One transport's delayed publishes and the movers of its subscribed topics. */
export class ScheduledMovers {
  readonly #o: ScheduledOptions;
  readonly #movers = new Map<string, RetryMover>();
  readonly #batches = new Map<string, { args: string[]; done: Promise<void> }>();

  constructor(options: ScheduledOptions) {
    this.#o = options;
  }

  /**
   * Stores a delayed publish in the scheduled set of `topic` (the envelope's topic, or the name
   * of its partition). Those of one topic made in the same turn of the event loop (without a
   * `dedupeKey`) go out as one script call.
   */
  publish(
    main: RedisClient,
    envelope: Envelope,
    at: number,
    topic: string = envelope.topic,
  ): Promise<void> {
    const o = this.#o;
    const set = keys.scheduled(o.prefix, topic);
    const member = scheduledMember(envelope, o.clock.now());
    this.arm(topic, at);
    const k = envelope.dedupeKey;
    if (typeof k === "string") {
      const dedupe = keys.dedupe(o.prefix, topic, k);
      return SCHEDULE.run(main, [set, dedupe], [String(o.dedupeWindow), String(at), member])
        .then(() => {});
    }
    let batch = this.#batches.get(topic);
    if (!batch) {
      const args: string[] = [];
      const done = Promise.resolve().then(async () => {
        this.#batches.delete(topic);
        for (let i = 0; i < args.length; i += 2 * SCHEDULE_CHUNK) {
          await SCHEDULE.run(main, [set], ["0", ...args.slice(i, i + 2 * SCHEDULE_CHUNK)]);
        }
      });
      batch = { args, done };
      this.#batches.set(topic, batch);
    }
    batch.args.push(String(at), member);
    return batch.done;
  }

  /** Starts moving `topic`'s due messages (once per topic). */
  watch(main: RedisClient, topic: string): void {
    if (this.#movers.has(topic)) return;
    const o = this.#o;
    const mover = new RetryMover({
      main,
      delayed: keys.scheduled(o.prefix, topic),
      retries: keys.stream(o.prefix, topic),
      clock: o.clock,
      poll: Math.min(o.poll, SCHEDULED_POLL_MS),
      logger: o.logger,
      script: MOVE_SCHEDULED,
    });
    this.#movers.set(topic, mover);
    mover.start();
  }

  /** A message of `topic` is due at `at`: this process's mover looks then. */
  arm(topic: string, at: number): void {
    this.#movers.get(topic)?.arm(at);
  }

  /** Stops every mover (the messages stay in Redis). */
  stop(): void {
    for (const m of this.#movers.values()) m.stop();
    this.#movers.clear();
  }
}
