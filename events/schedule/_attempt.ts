/**
 * One attempt of a schedule run: the single place where a run's function starts and ends. It
 * opens a fresh async context (trace id, schedule name, tick, attempt) and, with `.inject()`, a DI
 * scope; calls the function; enforces the time-out (aborting `run.signal`); disposes the scope;
 * and resolves to the failure, if any. It never rejects. With a tracer, the attempt is one span
 * (`<schedule> run`, a new trace), current while the function runs, so what it publishes and logs
 * joins that trace.
 *
 * @module
 */

import {
  type Clock,
  type Container,
  type Logger,
  runInNewContext,
  SPAN_KEY,
  type Tracer,
} from "@fw/runtime";
import { endProcessSpan, startScheduleSpan } from "../_tracing.ts";
import type { RunRecord } from "./store.ts";
import type { ScheduleContext, ScheduleDefinition, ScheduleRun } from "./schedule_types.ts";

/** What an attempt needs besides the definition and the run. */
export interface AttemptServices {
  /** Clock for the time-out. */
  readonly clock: Clock;
  /** DI container; an injecting schedule gets a scope of it per attempt. */
  readonly container: Container;
  /** Logs a failed scope disposal. */
  readonly logger: Logger;
  /** Tracer for the attempt's span (absent: nothing is traced). */
  readonly tracer?: Tracer;
}

function toError(value: unknown): Error {
  if (value instanceof Error) return value;
  let text = String(value);
  if (typeof value === "object" && value !== null) {
    try {
      text = JSON.stringify(value);
    } catch { /* keep String(value) */ }
  }
  return new Error(`Schedule threw a non-Error value: ${text}`);
}

/**
 * Runs one attempt of a schedule's function.
 *
 * @param def The schedule.
 * @param record The run (tick, attempt, trace id).
 * @param services Clock, container and logger.
 * @returns The failure, or `undefined` when the function succeeded.
 */
export function runAttempt(
  def: ScheduleDefinition,
  record: RunRecord,
  services: AttemptServices,
): Promise<Error | undefined> {
  const controller = new AbortController();
  const run: ScheduleRun = {
    name: def.name,
    scheduledAt: new Date(record.tick),
    attempt: record.attempt,
    traceId: record.traceId,
    signal: controller.signal,
  };
  const values: ScheduleContext = {
    traceId: record.traceId,
    scheduleName: def.name,
    scheduledAt: record.tick,
    scheduleAttempt: record.attempt,
  };
  const span = services.tracer === undefined ? undefined : startScheduleSpan(
    services.tracer,
    def.name,
    {
      "fw.schedule.cron": def.options.cron,
      "fw.schedule.scheduled_at": new Date(record.tick).toISOString(),
      "fw.schedule.attempt": record.attempt,
      "fw.schedule.trace_id": record.traceId,
    },
  );
  if (span !== undefined) (values as unknown as Record<string, unknown>)[SPAN_KEY] = span;
  let scope: ReturnType<Container["createScope"]> | undefined;
  const call = (): unknown => {
    const fn = def.fn as (...args: unknown[]) => unknown;
    if (!def.inject) return fn(run);
    scope = services.container.createScope();
    return scope.resolveAll(def.inject).then((deps) => fn(deps, run));
  };
  return new Promise<Error | undefined>((resolve) => {
    const { clock } = services;
    const timeout = def.options.timeout;
    let done = false;
    const finish = (error: Error | undefined) => {
      if (done) return;
      done = true;
      clock.clearTimeout(timer);
      if (span !== undefined) endProcessSpan(span, error ? "failed" : "acked", error);
      scope?.dispose().catch((err) =>
        services.logger.error("schedule scope disposal failed", { error: err, schedule: def.name })
      );
      resolve(error);
    };
    const timer = clock.setTimeout(() => {
      const err = new Error(`Schedule run timed out after ${timeout} ms`);
      err.name = "TimeoutError";
      controller.abort(err);
      finish(err);
    }, timeout);
    try {
      const result = runInNewContext(values as unknown as Record<string, unknown>, call);
      Promise.resolve(result).then(() => finish(undefined), (err) => finish(toError(err)));
    } catch (err) {
      finish(toError(err));
    }
  });
}
