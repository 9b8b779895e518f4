/**
 * Internal to the Redis Streams transport: the retry schedule of one Redis group. A retry waits
 * in the group's delayed set (`<topic>:delayed:<group>`, score = due time in ms, member =
 * `<attempt>|<unique>|<envelope JSON>`); the mover puts the due ones on the group's retry stream
 * (`<topic>:retries:<group>`) in one Lua script, so a retry is never lost nor moved twice
 * between the instances of the group that all run a mover. The group's readers read the retry
 * stream beside the topic stream, so a moved retry wakes a blocked read at once.
 *
 * The mover fires at the earliest due time it knows of (the retries its own process scheduled,
 * and the next due time each move reports), and at least every `retryPollMs` to find retries
 * that other processes scheduled.
 *
 * @module
 */

import type { Clock, Logger, TimerHandle } from "@fw/runtime";
import type { RedisClient } from "../../_redis.ts";
import { MOVE_DUE, type Script } from "./_scripts.ts";

/** What a mover needs. */
export interface RetryMoverOptions {
  readonly main: RedisClient;
  /** The delayed set. */
  readonly delayed: string;
  /** The retry stream. */
  readonly retries: string;
  readonly clock: Clock;
  /** Longest wait between two looks, in ms. */
  readonly poll: number;
  readonly logger?: Logger;
  /** The move script (default `MOVE_DUE`; delayed publishes use `MOVE_SCHEDULED`). */
  readonly script?: Script;
}

/** Most retries moved per script call. */
const MOVE_LIMIT = 500;

/** Moves due retries of one group onto its retry stream. */
export class RetryMover {
  /** The delayed set's key. */
  readonly delayed: string;
  readonly #o: RetryMoverOptions;
  #timer: TimerHandle | undefined;
  #at = Infinity;
  #running: Promise<void> | undefined;
  #again = false;
  #stopped = true;

  constructor(options: RetryMoverOptions) {
    this.#o = options;
    this.delayed = options.delayed;
  }

  /** Starts looking (now, then at least every poll interval). */
  start(): void {
    this.#stopped = false;
    this.arm(this.#o.clock.now());
  }

  /** Makes the mover look no later than `due` (ms since the epoch). */
  arm(due: number): void {
    if (this.#stopped) return;
    const clock = this.#o.clock;
    const at = Math.min(due, clock.now() + this.#o.poll);
    if (this.#timer !== undefined) {
      if (this.#at <= at) return;
      clock.clearTimeout(this.#timer);
    }
    this.#at = at;
    this.#timer = clock.setTimeout(this.#fire, Math.max(0, at - clock.now()));
  }

  #fire = (): void => {
    this.#timer = undefined;
    this.#at = Infinity;
    if (this.#running) {
      this.#again = true;
      return;
    }
    this.#running = this.#move().catch((err) => {
      if (!this.#stopped) {
        this.#o.logger?.warn("redis streams: moving due retries failed", { error: String(err) });
      }
      return undefined;
    }).then((next) => {
      this.#running = undefined;
      if (this.#stopped) return;
      if (this.#again) {
        this.#again = false;
        this.arm(this.#o.clock.now());
      } else this.arm(next ?? Infinity);
    });
  };

  /** Moves what is due; returns the next due time, if any. */
  async #move(): Promise<number | undefined> {
    const o = this.#o;
    for (;;) {
      const [moved, next] = await (o.script ?? MOVE_DUE).run(o.main, [o.delayed, o.retries], [
        String(o.clock.now()),
        String(MOVE_LIMIT),
      ]) as [number, string];
      if (Number(moved) >= MOVE_LIMIT) continue;
      return next === "" || next === undefined ? undefined : Number(next);
    }
  }

  /** Stops the timer. */
  stop(): void {
    this.#stopped = true;
    if (this.#timer !== undefined) this.#o.clock.clearTimeout(this.#timer);
    this.#timer = undefined;
  }
}
