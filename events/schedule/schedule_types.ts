/**
 * Types of schedule definitions: options, the run a schedule's function receives, and the
 * builder interface returned by `schedule()`.
 *
 * @module
 */

import type { ProviderMap, Resolved } from "@fw/runtime";

/** Options of `schedule(name).options({...})`. */
export interface ScheduleOptions {
  /**
   * When it runs: a cron expression of 5 fields (minute hour day-of-month month day-of-week), or
   * 6 with seconds first, or a nickname such as `@daily`. Required.
   */
  cron?: string;
  /** IANA time zone the expression is read in (default `UTC`). */
  timezone?: string;
  /**
   * A tick that comes while the previous run is still in progress (running or waiting for a
   * retry) on any instance: `skip` it (default), or `allow` both to run.
   */
  overlap?: "skip" | "allow";
  /**
   * Ticks missed while no instance was up: `none` (default) runs none of them; `latest` runs the
   * latest one at start-up.
   */
  catchUp?: "none" | "latest";
  /** Name of the transport (of `events({ transports })`) whose engine keeps the schedule's state. */
  transport?: string;
  /** Retries of a failed run after its first attempt (default 3). */
  maxRetries?: number;
  /** Cap on one retry delay in ms (default 60000). */
  maxBackoff?: number;
  /** Random reduction of each retry delay, as a fraction (default 0.1). */
  jitter?: number;
  /** A run that takes longer fails (its `signal` aborts) and is retried, in ms (default 600000). */
  timeout?: number;
  /**
   * How long a run's claim lasts without renewal, in ms (default 15000). The instance running it
   * renews it every third of that; when the instance dies, another one takes the run over once the
   * lease has expired, as its next attempt.
   */
  lease?: number;
}

/** Options with every default applied. */
export interface ResolvedScheduleOptions {
  /** The cron expression. */
  readonly cron: string;
  /** The time zone. */
  readonly timezone: string;
  /** Overlap policy. */
  readonly overlap: "skip" | "allow";
  /** Catch-up policy. */
  readonly catchUp: "none" | "latest";
  /** Transport name, when set. */
  readonly transport?: string;
  /** Retries after the first attempt. */
  readonly maxRetries: number;
  /** Cap on one retry delay (ms). */
  readonly maxBackoff: number;
  /** Jitter fraction. */
  readonly jitter: number;
  /** Run time-out (ms). */
  readonly timeout: number;
  /** Lease (ms). */
  readonly lease: number;
}

/** What a schedule's function receives. */
export interface ScheduleRun {
  /** The schedule's name. */
  readonly name: string;
  /** The tick this run is for (every attempt of a run has the same one). */
  readonly scheduledAt: Date;
  /** 1-based attempt. */
  readonly attempt: number;
  /** Trace id of the run (the same for each attempt). */
  readonly traceId: string;
  /** Aborts when the run times out or the application stops. */
  readonly signal: AbortSignal;
}

/** Values of the async context inside a schedule's function. */
export interface ScheduleContext {
  /** Trace id of the run. */
  readonly traceId: string;
  /** The schedule's name. */
  readonly scheduleName: string;
  /** The tick, ms since the epoch. */
  readonly scheduledAt: number;
  /** 1-based attempt. */
  readonly scheduleAttempt: number;
}

/** The function given to `.handle()`. */
export type ScheduleFn<D extends ProviderMap | undefined> = D extends ProviderMap
  ? (deps: Resolved<D>, run: ScheduleRun) => unknown
  : (run: ScheduleRun) => unknown;

/** A finished schedule definition, as exported from a `*.on.ts` file. */
export interface ScheduleDefinition {
  /** Marker that tells schedule definitions apart from other exports. */
  readonly kind: "schedule";
  /** Unique name: the key of its shared state, its metrics and log entries. */
  readonly name: string;
  /** Resolved options. */
  readonly options: ResolvedScheduleOptions;
  /** Providers to inject, when `.inject()` was used. */
  readonly inject?: ProviderMap;
  /** The function: `(run)`, or `(deps, run)` with `.inject()`. */
  readonly fn: (...args: never[]) => unknown;
}

/** The builder returned by `schedule(name)`; `.handle()` comes last. */
export interface ScheduleBuilder<D extends ProviderMap | undefined> {
  /** Sets options (merged with earlier calls); `cron` must be set before `.handle()`. */
  options(options: ScheduleOptions): ScheduleBuilder<D>;
  /** Providers resolved per run in the run's DI scope. */
  inject<N extends ProviderMap>(providers: N): ScheduleBuilder<N>;
  /** Sets the function and finishes the definition. */
  handle(fn: ScheduleFn<D>): ScheduleDefinition;
}
