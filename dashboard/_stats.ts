/**
 * What the dashboard counts while it is installed: per route (method and pattern) a sliding
 * window of requests, errors (status >= 500) and latency; per topic a window of publishes; per
 * handler (consumer) its success, failure, retry, dead-letter and dropped counts. Routes and
 * handlers are fed by the dashboard's middleware and meter ({@linkcode StatsMeter}). Internal.
 *
 * @module
 */

import type { Window, WindowSummary } from "./_window.ts";
import { Window as SlidingWindow } from "./_window.ts";

/** The counts of one handler's consumer. */
export interface HandlerCells {
  success: number;
  failure: number;
  retry: number;
  dlq: number;
  dropped: number;
  /** Invocations (success and failure) with their durations. */
  readonly window: Window;
}

/** One route's figures in a snapshot. */
export interface RouteFigures extends WindowSummary {
  /** HTTP method. */
  readonly method: string;
  /** Route pattern, or `(no route)` for requests that matched none. */
  readonly route: string;
  /** Requests since the dashboard started. */
  readonly total: number;
}

/** One topic's publish figures in a snapshot. */
export interface TopicFigures {
  /** Topic name. */
  readonly topic: string;
  /** Publishes per second over the window. */
  readonly rate: number;
  /** Publishes since start. */
  readonly total: number;
  /** Failed publishes since start. */
  readonly errors: number;
}

/** Requests that matched no route are counted under this name. */
export const NO_ROUTE = "(no route)";

/** The dashboard's counters. */
export class Stats {
  readonly #routes = new Map<string, Map<string, Window>>();
  readonly topics: Map<string, Window> = new Map();
  /** Handler cells by topic, in the order the consumers were created. */
  readonly handlers: Map<string, HandlerCells[]> = new Map();

  /** @param seconds Window length in seconds. */
  constructor(readonly seconds: number) {}

  /**
   * The window of one route and method (created on first use).
   *
   * @param route The matched pattern (or undefined: no route).
   * @param method The method.
   * @returns Its window.
   */
  route(route: string | undefined, method: string): Window {
    const key = route ?? NO_ROUTE;
    let byMethod = this.#routes.get(key);
    if (byMethod === undefined) this.#routes.set(key, byMethod = new Map());
    let w = byMethod.get(method);
    if (w === undefined) byMethod.set(method, w = new SlidingWindow(this.seconds));
    return w;
  }

  /** The window of a topic's publishes (created on first use). */
  topic(name: string): Window {
    let w = this.topics.get(name);
    if (w === undefined) this.topics.set(name, w = new SlidingWindow(this.seconds));
    return w;
  }

  /** Starts the cells of one more consumer of `topic`. */
  addHandler(topic: string): HandlerCells {
    const cells: HandlerCells = {
      success: 0,
      failure: 0,
      retry: 0,
      dlq: 0,
      dropped: 0,
      window: new SlidingWindow(this.seconds),
    };
    const list = this.handlers.get(topic);
    if (list) list.push(cells);
    else this.handlers.set(topic, [cells]);
    return cells;
  }

  /** The latest consumer cells of `topic` (created when none). */
  lastHandler(topic: string): HandlerCells {
    const list = this.handlers.get(topic);
    return list?.[list.length - 1] ?? this.addHandler(topic);
  }

  /**
   * Route figures, busiest first.
   *
   * @param nowMs Clock time.
   * @param skip A path prefix whose routes are left out (the dashboard's own).
   */
  routes(nowMs: number, skip?: string): RouteFigures[] {
    const out: RouteFigures[] = [];
    for (const [route, byMethod] of this.#routes) {
      if (skip !== undefined && route.startsWith(skip)) continue;
      for (const [method, w] of byMethod) {
        out.push({ method, route, total: w.total, ...w.summary(nowMs) });
      }
    }
    return out.sort((a, b) => b.rate - a.rate || a.route.localeCompare(b.route));
  }

  /** Topic publish figures, by name. */
  topicFigures(nowMs: number): TopicFigures[] {
    return [...this.topics].sort(([a], [b]) => a.localeCompare(b)).map(([topic, w]) => ({
      topic,
      rate: w.summary(nowMs).rate,
      total: w.total - w.totalErrors,
      errors: w.totalErrors,
    }));
  }
}
