/**
 * The options of `dashboard()` and their checks: an explicit `secure` choice, a valid path and timings.
 * Internal.
 *
 * @module
 */

import type { EventServerSource } from "./_views.ts";
import type { ScheduleSource } from "./schedules.ts";
import type { TraceSource } from "./traces.ts";

/** Options of `dashboard()`. */
export interface DashboardOptions {
  /**
   * Who may use it: `{ roles }` and/or `{ scopes }` (every one listed is required, checked like
   * `.secure()` on the bearer token `oauth()` verified), or `false` for no check, which is
   * refused when `NODE_ENV` is `production`. Required.
   */
  readonly secure: false | {
    readonly roles?: readonly string[];
    readonly scopes?: readonly string[];
  };
  /** Where it is mounted (default `/_fw`; the API is under `<path>/api`). */
  readonly path?: string;
  /** The Event Server to show (the `eventServer()` plugin). */
  readonly eventServer?: EventServerSource;
  /**
   * Where the Schedules view reads schedules (default: the cron schedules of the application's
   * `events()` plugin, read from their engine when the view is shown).
   */
  readonly schedules?: ScheduleSource;
  /**
   * Where the Traces view reads traces. Default: a {@linkcode SpanRing} of the last 100 traces,
   * fed by the application's tracer when `telemetry()` comes before the dashboard. A `SpanRing`
   * given here is fed the same way (to choose its bounds); another source is only read.
   */
  readonly traces?: TraceSource;
  /** Ms between two live updates of an open page (default 1000). */
  readonly intervalMs?: number;
  /** Length of the rate and latency window, in seconds (default 60). */
  readonly windowSeconds?: number;
}

function fail(detail: string): never {
  throw new TypeError(`Invalid dashboard() option ${detail}`);
}

/** The options with defaults applied. */
export interface ResolvedDashboardOptions {
  readonly path: string;
  readonly secure: false | {
    readonly roles?: readonly string[];
    readonly scopes?: readonly string[];
  };
  readonly intervalMs: number;
  readonly windowSeconds: number;
}

function strings(value: unknown, name: string): void {
  if (value !== undefined && !(Array.isArray(value) && value.every((v) => typeof v === "string"))) {
    fail(`"secure.${name}": expected an array of strings`);
  }
}

/**
 * Checks the options.
 *
 * @param o What was given.
 * @returns The resolved options.
 * @throws {TypeError} Naming the option.
 */
export function resolveOptions(o: DashboardOptions): ResolvedDashboardOptions {
  if (typeof o !== "object" || o === null) {
    throw new TypeError(
      'dashboard() needs options with an explicit "secure": { roles: [...] } or false',
    );
  }
  const secure = o.secure;
  if (secure === undefined) {
    fail('"secure": required; give { roles: ["admin"] } (or scopes) to guard it, or false');
  }
  if (secure !== false) {
    if (typeof secure !== "object" || secure === null) {
      fail('"secure": expected { roles, scopes } or false');
    }
    strings(secure.roles, "roles");
    strings(secure.scopes, "scopes");
    if (!secure.roles?.length && !secure.scopes?.length) {
      fail('"secure": name at least one role or scope (or pass false to open it)');
    }
  }
  const path = o.path ?? "/_fw";
  if (typeof path !== "string" || !/^(\/[A-Za-z0-9._~-]+)+$/.test(path)) {
    fail(`"path": expected a path such as "/_fw", got "${String(path)}"`);
  }
  const intervalMs = o.intervalMs ?? 1000;
  if (!Number.isInteger(intervalMs) || intervalMs < 100) {
    fail(`"intervalMs": expected an integer >= 100, got "${intervalMs}"`);
  }
  const windowSeconds = o.windowSeconds ?? 60;
  if (!Number.isInteger(windowSeconds) || windowSeconds < 1 || windowSeconds > 3600) {
    fail(`"windowSeconds": expected an integer from 1 to 3600, got "${windowSeconds}"`);
  }
  return { path, secure, intervalMs, windowSeconds };
}
