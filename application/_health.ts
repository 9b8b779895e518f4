/**
 * The liveness and readiness routes of `http({ health })`. They are answered by the server plugin
 * before the dispatcher (no middleware, no authentication, no rate limit), so a load balancer or a
 * Kubernetes probe reaches them however the application is secured.
 *
 * @module
 */

import { pathOf, urlOf } from "./_dispatch.ts";

/** The `health` option of `http()`. */
export interface HealthOptions {
  /** Path of the liveness route: 200 while the process serves at all. Default `/livez`. */
  liveness?: string;
  /**
   * Path of the readiness route: 200 once the application has started, 503 from the moment a
   * stop begins (SIGTERM, SIGINT or `app.stop()`). Default `/readyz`.
   */
  readiness?: string;
  /**
   * How long a stop keeps serving, with readiness at 503, before open streams are told to
   * reconnect and the listener closes, in milliseconds (default 5,000). Set it above the time the
   * balancer needs to mark the instance down: HAProxy's `inter` times `fall`, or Kubernetes'
   * `periodSeconds` times `failureThreshold` of the readiness probe. 0 skips the wait.
   */
  drainDelayMs?: number;
}

/** The checked `health` option. */
export interface HealthSettings {
  readonly liveness: string;
  readonly readiness: string;
  readonly drainDelayMs: number;
}

function path(name: string, value: string | undefined, fallback: string): string {
  const p = value ?? fallback;
  if (typeof p !== "string" || !p.startsWith("/") || /[?#\s]/.test(p)) {
    throw new TypeError(
      `Invalid http() option "health.${name}": expected a path starting with "/", got ${
        JSON.stringify(value)
      }`,
    );
  }
  return p;
}

/**
 * Checks `http({ health })`.
 *
 * @param health The option: `true` for the defaults, an object, or `false`/`undefined` for none.
 * @returns The settings, or undefined when health routes are off.
 * @throws {TypeError} For a path that does not start with `/` or a negative delay.
 */
export function checkHealth(
  health: boolean | HealthOptions | undefined,
): HealthSettings | undefined {
  if (health === undefined || health === false) return undefined;
  const options = health === true ? {} : health;
  if (typeof options !== "object" || options === null) {
    throw new TypeError(
      `Invalid http() option "health": expected true or an object, got ${JSON.stringify(health)}`,
    );
  }
  const drainDelayMs = options.drainDelayMs ?? 5_000;
  if (typeof drainDelayMs !== "number" || !(drainDelayMs >= 0) || !Number.isFinite(drainDelayMs)) {
    throw new TypeError(
      `Invalid http() option "health.drainDelayMs": expected a non-negative number of milliseconds, got ${
        JSON.stringify(options.drainDelayMs)
      }`,
    );
  }
  const liveness = path("liveness", options.liveness, "/livez");
  const readiness = path("readiness", options.readiness, "/readyz");
  if (liveness === readiness) {
    throw new TypeError(
      `Invalid http() option "health": liveness and readiness share the path "${liveness}"`,
    );
  }
  return { liveness, readiness, drainDelayMs };
}

const HEADERS = { "content-type": "application/json", "cache-control": "no-store" };

/**
 * The answer to a health route, or undefined when the request is for another path. The path is
 * cut as the dispatcher cuts it (`pathOf`, on the URL `urlOf` remembers for the dispatcher).
 *
 * @param settings The checked option.
 * @param req The request.
 * @param ready Whether the application has started and is not stopping.
 * @returns The response for a health path, else undefined.
 */
export function healthResponse(
  settings: HealthSettings,
  req: Request,
  ready: () => "starting" | "ready" | "stopping",
): Response | undefined {
  const path = pathOf(urlOf(req));
  if (path === settings.liveness) {
    return new Response('{"status":"alive"}', { status: 200, headers: HEADERS });
  }
  if (path !== settings.readiness) return undefined;
  const state = ready();
  return new Response(JSON.stringify({ status: state }), {
    status: state === "ready" ? 200 : 503,
    headers: HEADERS,
  });
}
