/**
 * The dashboard's request observer (`AppContext.observeRequests`, not a middleware: no async
 * context and no promise per request): per route and method, it counts every request in the
 * route's window and times a sample of them (status and latency, from routing to the response).
 * The sample is decided as the request is routed, over all routes: every request of the first
 * {@linkcode SAMPLE_FROM} of a second, then one in {@linkcode SAMPLE_EVERY}. So a request
 * outside the sample costs a counter and the route's window lookup: no clock or timer read, no
 * callback.
 * Internal.
 *
 * @module
 */

import type { Clock, RequestObserver, TimerHandle } from "@fw/runtime";
import type { Stats } from "./_stats.ts";
import type { Window } from "./_window.ts";

/** Requests of one second that are all timed; past it, one in {@linkcode SAMPLE_EVERY} is. */
export const SAMPLE_FROM = 100;
/** One request in this many is timed past the first {@linkcode SAMPLE_FROM} of a second. */
export const SAMPLE_EVERY = 64;

/** The observer and the way to stop its ticker. */
export interface RequestCounter {
  /** The request observer. */
  readonly observer: RequestObserver;
  /** Stops its ticker (the application stops). */
  stop(): void;
}

/**
 * The request observer that feeds `stats` with the requests of the application.
 *
 * Requests are placed in the second they arrive in without a clock read each: a ticker set on
 * the clock for each second boundary moves the current second on while requests come, and stops
 * after a second without any (the next request reads the clock and starts it again).
 *
 * @param stats Where the windows are.
 * @param clock Time of the windows.
 * @returns The observer and its stop.
 */
export function requestCounter(stats: Stats, clock: Clock): RequestCounter {
  // the current second's start (ms), while the ticker runs
  let now = 0;
  let ticker: TimerHandle | undefined;
  let seen = 0;
  let stopped = false;
  const arm = (at: number) => {
    ticker = clock.setTimeout(tick, 1000 - (at % 1000));
  };
  const tick = () => {
    ticker = undefined;
    const idle = seen === 0;
    seen = 0;
    if (idle || stopped) return; // a quiet second: the next request starts it again
    const t = clock.now();
    now = t - (t % 1000);
    arm(t);
  };
  // the window of the last route: most requests of a busy app go to few routes
  let lastRoute: string | undefined;
  let lastMethod = "";
  let last: Window | undefined;
  const windowOf = (route: string | undefined, method: string): Window => {
    if (last !== undefined && route === lastRoute && method === lastMethod) return last;
    lastRoute = route;
    lastMethod = method;
    return last = stats.route(route, method);
  };
  const observer: RequestObserver = (method, route) => {
    if (ticker === undefined && !stopped) {
      const t = clock.now();
      now = t - (t % 1000);
      seen = 0;
      arm(t);
    }
    const at = now;
    const w = windowOf(route, method);
    w.tally(at);
    if (++seen > SAMPLE_FROM && seen % SAMPLE_EVERY !== 0) return undefined;
    const start = performance.now();
    return (status) => w.observe(at, status >= 500, performance.now() - start);
  };
  return {
    observer,
    stop() {
      stopped = true;
      if (ticker !== undefined) clock.clearTimeout(ticker);
      ticker = undefined;
    },
  };
}
