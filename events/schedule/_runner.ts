/**
 * One schedule on one instance: a timer for its next tick (and for runs elsewhere that may need
 * taking over), the compare-and-set loop over its shared record, the runs this instance claimed
 * (their lease renewals, their outcome written back), and the metrics and the completion log line
 * of each run.
 *
 * @module
 */

import type {
  Clock,
  Container,
  Counter,
  Histogram,
  Logger,
  Meter,
  TimerHandle,
  Tracer,
} from "@fw/runtime";
import { retryDelay } from "../backoff.ts";
import { newTraceId } from "../envelope.ts";
import type { CronTicks } from "./_cron.ts";
import { runAttempt } from "./_attempt.ts";
import { type AttemptOutcome, renew, settle, step, type StepResult } from "./_state.ts";
import type { ScheduleDefinition } from "./schedule_types.ts";
import type { RunRecord, ScheduleRecord, ScheduleStore, StoredSchedule } from "./store.ts";

/** Services of a runner. */
export interface RunnerServices {
  /** The shared state. */
  readonly store: ScheduleStore;
  /** This instance's id (unique per process and scheduler). */
  readonly instance: string;
  /** Time and timers. */
  readonly clock: Clock;
  /** Completion lines and warnings. */
  readonly logger: Logger;
  /** The `events.schedule.*` instruments. */
  readonly meter: Meter;
  /** DI container for injecting schedules. */
  readonly container: Container;
  /** Randomness for retry jitter. */
  readonly random: () => number;
  /** Tracer for a span per attempt (absent: nothing is traced). */
  readonly tracer?: Tracer;
}

/** How one tick or attempt ended, in the log line. */
export type ScheduleOutcome = "ok" | "retry" | "failed" | "skipped";

/** A schedule's state as this instance sees it (see `Scheduler.status()`). */
export interface RunnerStatus {
  /** The shared record, when the engine has one. */
  readonly record?: ScheduleRecord;
  /** The next tick after now (ms), if there is one. */
  readonly next?: number;
  /** Attempts running on this instance now. */
  readonly runningHere: number;
  /** The error of the last attempt that failed on this instance. */
  readonly lastError?: {
    readonly tick: number;
    readonly attempt: number;
    readonly message: string;
  };
}

/** The longest a timer is set for; a far tick is reached through several (timers overflow). */
const MAX_TIMER_MS = 6 * 3600_000;
/** Wait before trying again after the engine failed. */
const ERROR_RETRY_MS = 1000;
/** Compare-and-set attempts before giving up until the next wake-up. */
const MAX_CAS = 25;

/** Runs one schedule on this instance. */
export class ScheduleRunner {
  readonly #def: ScheduleDefinition;
  readonly #s: RunnerServices;
  readonly #cron: CronTicks;
  readonly #m: { run: Counter; failure: Counter; skipped: Counter; duration: Histogram };
  readonly #inFlight = new Set<Promise<void>>();
  /** Runs executing here, as `tick:attempt`. */
  readonly #running = new Set<string>();
  readonly #isRunning = (run: RunRecord): boolean =>
    run.owner === this.#s.instance && this.#running.has(`${run.tick}:${run.attempt}`);
  #cursor = 0;
  #timer: TimerHandle | undefined;
  #stopped = true;
  #waking: Promise<void> | undefined;
  #again = false;
  #lastError: RunnerStatus["lastError"];

  /**
   * @param def The schedule.
   * @param cron Its compiled expression.
   * @param services Store, instance id and services.
   */
  constructor(def: ScheduleDefinition, cron: CronTicks, services: RunnerServices) {
    this.#def = def;
    this.#s = services;
    this.#cron = cron;
    const meter = services.meter;
    const p = `events.schedule.${def.name}`;
    this.#m = {
      run: meter.counter(`${p}.run`, { description: "Schedule run attempts" }),
      failure: meter.counter(`${p}.failure`, { description: "Failed schedule run attempts" }),
      skipped: meter.counter(`${p}.skipped`, { description: "Ticks skipped by overlap" }),
      duration: meter.histogram(`${p}.duration`, {
        description: "Schedule run duration",
        unit: "ms",
      }),
    };
  }

  /** Reads the record once (catching up when asked) and arms the timer. */
  async start(): Promise<void> {
    this.#stopped = false;
    const now = this.#s.clock.now();
    this.#cursor = now;
    await this.#wake(this.#def.options.catchUp === "latest");
  }

  /** The stored record, the next tick and this instance's runs (one read of the engine). */
  async status(): Promise<RunnerStatus> {
    const stored = await this.#s.store.read(this.#def.name);
    const next = this.#cron.next(Math.max(this.#cursor, this.#s.clock.now()));
    return {
      ...(stored ? { record: stored.record } : {}),
      ...(next !== undefined ? { next } : {}),
      runningHere: this.#running.size,
      ...(this.#lastError ? { lastError: this.#lastError } : {}),
    };
  }

  /** Stops the timer and waits for this instance's runs to finish and be recorded. */
  async stop(): Promise<void> {
    this.#stopped = true;
    this.#clearTimer();
    await this.#waking;
    while (this.#inFlight.size > 0) await Promise.all(this.#inFlight);
  }

  #clearTimer(): void {
    if (this.#timer !== undefined) this.#s.clock.clearTimeout(this.#timer);
    this.#timer = undefined;
  }

  #arm(at: number): void {
    if (this.#stopped) return;
    this.#clearTimer();
    const delay = Math.min(Math.max(0, at - this.#s.clock.now()), MAX_TIMER_MS);
    this.#timer = this.#s.clock.setTimeout(() => {
      this.#timer = undefined;
      this.#wake(false);
    }, delay);
  }

  /** One look at the record; overlapping calls are folded into one more pass. */
  #wake(catchUp: boolean): Promise<void> {
    if (this.#waking) {
      this.#again = true;
      return this.#waking;
    }
    const pass = async () => {
      do {
        this.#again = false;
        await this.#pass(catchUp);
        catchUp = false;
      } while (this.#again && !this.#stopped);
      this.#waking = undefined;
    };
    return this.#waking = pass();
  }

  /** Looks at the record for each tick due since the last look (oldest first), then re-arms. */
  async #pass(catchUp: boolean): Promise<void> {
    let seen: ScheduleRecord | undefined;
    try {
      for (;;) {
        const look = await this.#look(catchUp);
        catchUp = false;
        seen = look.record ?? seen;
        if (look.tick === undefined) {
          this.#cursor = Math.max(this.#cursor, look.now);
          break;
        }
        this.#cursor = Math.max(this.#cursor, look.tick);
        if (this.#stopped) break;
      }
    } catch (err) {
      this.#s.logger.error("schedule state could not be read or written; trying again", {
        error: err,
        schedule: this.#def.name,
      });
      this.#arm(this.#s.clock.now() + ERROR_RETRY_MS);
      return;
    }
    this.#armFor(seen);
  }

  /**
   * One read, {@linkcode step} and compare-and-set (again while another instance wins the race).
   *
   * @returns The record as left, and the tick looked at (claimed, skipped or found taken).
   */
  async #look(
    catchUp: boolean,
  ): Promise<{ record?: ScheduleRecord; tick?: number; now: number }> {
    const { store, clock, instance } = this.#s;
    const o = this.#def.options;
    for (let i = 0; i < MAX_CAS && !this.#stopped; i++) {
      const stored = await store.read(this.#def.name);
      const now = clock.now();
      const tick = catchUp ? this.#catchUpTick(stored?.record, now) : this.#dueTick(now);
      const result = step(stored?.record, {
        now,
        instance,
        overlap: o.overlap,
        maxRetries: o.maxRetries,
        lease: o.lease,
        traceId: newTraceId(),
        running: this.#isRunning,
        ...(tick !== undefined ? { tick } : {}),
      });
      if (!result.record) return { ...(stored ? { record: stored.record } : {}), tick, now };
      if (await store.write(this.#def.name, result.record, stored?.version)) {
        this.#apply(result);
        return { record: result.record, tick, now };
      }
    }
    return { now: clock.now() };
  }

  /**
   * The oldest tick due since the last look. A tick late by less than the lease still runs (a
   * busy event loop, a slow engine); after a longer stall only the latest due tick does.
   */
  #dueTick(now: number): number | undefined {
    const next = this.#cron.next(this.#cursor);
    if (next === undefined || next > now) return undefined;
    return now - next > this.#def.options.lease ? this.#cron.latest(this.#cursor, now) : next;
  }

  /** The latest tick missed since the last one claimed (never before the schedule existed). */
  #catchUpTick(record: ScheduleRecord | undefined, now: number): number | undefined {
    if (!record) return undefined;
    return this.#cron.latest(Math.max(record.tick ?? -Infinity, record.since), now);
  }

  /** Wakes at the next tick, or earlier when a run elsewhere may need taking over. */
  #armFor(record: ScheduleRecord | undefined): void {
    let at = this.#cron.next(this.#cursor) ?? Infinity;
    for (const run of record?.runs ?? []) {
      if (!this.#isRunning(run)) at = Math.min(at, run.until);
    }
    if (at !== Infinity) this.#arm(at);
  }

  #apply(result: StepResult): void {
    if (result.skipped !== undefined) {
      this.#m.skipped.add(1);
      this.#log("skipped", result.skipped, 0, newTraceId(), 0);
    }
    for (const run of result.abandoned) {
      this.#m.run.add(1);
      this.#m.failure.add(1);
      this.#log("failed", run.tick, run.attempt, run.traceId, 0, {
        error: `the instance running attempt ${run.attempt} stopped renewing its lease`,
      });
    }
    for (const run of result.start) {
      const key = `${run.tick}:${run.attempt}`;
      this.#running.add(key);
      const p = this.#execute(run).finally(() => {
        this.#running.delete(key);
        this.#inFlight.delete(p);
      });
      this.#inFlight.add(p);
    }
  }

  async #execute(run: RunRecord): Promise<void> {
    const { clock, instance } = this.#s;
    const o = this.#def.options;
    let lost = false;
    let renewTimer: TimerHandle | undefined;
    const renewEvery = Math.max(1, Math.floor(o.lease / 3));
    const scheduleRenewal = () => {
      renewTimer = clock.setTimeout(async () => {
        renewTimer = undefined;
        const ok = await this.#update((r) => renew(r, run, instance, clock.now() + o.lease));
        if (ok === false) lost = true;
        else if (renewTimer === undefined && !finished) scheduleRenewal();
      }, renewEvery);
    };
    let finished = false;
    scheduleRenewal();
    const started = clock.now();
    const error = await runAttempt(this.#def, run, this.#s);
    finished = true;
    if (renewTimer !== undefined) clock.clearTimeout(renewTimer);
    const now = clock.now();
    const duration = now - started;
    this.#m.run.add(1);
    this.#m.duration.record(duration);
    let outcome: AttemptOutcome = { ok: true };
    let delay: number | undefined;
    if (error) {
      this.#lastError = { tick: run.tick, attempt: run.attempt, message: error.message };
      this.#m.failure.add(1);
      if (run.attempt <= o.maxRetries) {
        delay = retryDelay(run.attempt, o.maxBackoff, o.jitter, this.#s.random);
        outcome = { ok: false, retryAt: now + delay };
      } else outcome = { ok: false };
    }
    const written = lost ? false : await this.#record(run, outcome, now);
    const extra: Record<string, unknown> = {};
    if (error) extra.error = error.message;
    if (delay !== undefined) extra.delay = delay;
    if (written === false) {
      extra.lost = "the lease expired and another instance took the run over";
    }
    const name: ScheduleOutcome = !error ? "ok" : delay !== undefined ? "retry" : "failed";
    this.#log(name, run.tick, run.attempt, run.traceId, duration, extra);
    if (delay !== undefined && written) this.#wake(false);
  }

  /**
   * Writes an attempt's outcome; while the engine fails, tries again every second until the
   * run's lease would have expired (after that another instance takes the run over anyway).
   */
  async #record(
    run: RunRecord,
    outcome: AttemptOutcome,
    now: number,
  ): Promise<boolean | undefined> {
    const { clock, instance } = this.#s;
    const change = (r: ScheduleRecord | undefined) => settle(r, run, instance, outcome, now);
    let written = await this.#update(change);
    const deadline = now + this.#def.options.lease;
    while (written === undefined && !this.#stopped && clock.now() + ERROR_RETRY_MS < deadline) {
      await new Promise<void>((resolve) => clock.setTimeout(resolve, ERROR_RETRY_MS));
      written = await this.#update(change);
    }
    return written;
  }

  /**
   * Applies `change` to the record with a compare-and-set until it is written.
   *
   * @returns true when written, false when `change` says the run is no longer ours, `undefined`
   *   when the engine failed.
   */
  async #update(
    change: (record: ScheduleRecord | undefined) => ScheduleRecord | undefined,
  ): Promise<boolean | undefined> {
    const { store } = this.#s;
    try {
      for (let i = 0; i < MAX_CAS; i++) {
        const stored: StoredSchedule | undefined = await store.read(this.#def.name);
        const next = change(stored?.record);
        if (!next) return false;
        if (await store.write(this.#def.name, next, stored?.version)) return true;
      }
    } catch (err) {
      this.#s.logger.error("schedule state could not be read or written", {
        error: err,
        schedule: this.#def.name,
      });
    }
    return undefined;
  }

  #log(
    outcome: ScheduleOutcome,
    tick: number,
    attempt: number,
    traceId: string,
    duration: number,
    extra?: Record<string, unknown>,
  ): void {
    const logger = this.#s.logger;
    const level = outcome === "ok" || outcome === "skipped"
      ? "info"
      : outcome === "failed"
      ? "error"
      : "warn";
    if (!logger.enabled(level)) return;
    logger[level]("schedule run", {
      traceId,
      schedule: {
        name: this.#def.name,
        scheduledAt: new Date(tick).toISOString(),
        attempt,
        outcome,
        duration,
        ...extra,
      },
    });
  }
}
