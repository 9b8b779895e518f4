/**
 * The checks on `dashboard()` options: an explicit `secure` choice, a valid path and timings.
 * Internal.
 *
 * @module
 */

import type { DashboardOptions } from "./dashboard.ts";

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
