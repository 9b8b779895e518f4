/**
 * `dashboard()`: the operations dashboard, one page and a JSON API under `/_fw/` (by default).
 *
 * - Overview: every route's request rate, p50/p99 latency and error rate over the last minute;
 *   every topic's publish rate; every handler's in-flight, success, failure, retry and
 *   dead-letter counts. The dashboard counts these itself while it is installed: a middleware
 *   for routes and a meter in front of the application's meter for the event bus (add it after
 *   `telemetry()`, whose meter it wraps).
 * - Queues: each transport's `inspect()` (backlog, in flight, retries, oldest age).
 * - Dead letters across every transport: list with a topic filter and pages, redrive, discard.
 * - Event Server: the `eventServer` given in the options.
 * - Schedules: the cron schedules of the application's `events()` plugin (or `schedules`).
 * - Traces: with `telemetry()` before the dashboard, the last traces of this process (a bounded
 *   {@linkcode SpanRing} fed by a tracer the dashboard puts in front of the app's), each as a
 *   waterfall (request, publish, wait, each attempt) with the log lines of each span; or the
 *   `traces` given in the options. Without the dashboard nothing of this is loaded or run.
 *
 * The page reads one Server-Sent Events stream while it is open; with no page open, the
 * dashboard costs one request-observer call per request (`AppContext.observeRequests`: no
 * middleware, so no async context or promise of its own) and a counter per event; under load it
 * times a sample of each route's requests (all of the first 100 of a second, then one in 64).
 *
 * Security: `secure` is required. `{ roles }` / `{ scopes }` guard every API call through the
 * application's `.secure()` rules (use `oauth()`: no token answers 401, a missing role 403);
 * `false` opens it and is refused at start-up when `NODE_ENV` is `production`. State-changing
 * calls are POSTs whose `Origin` must be the host (403 otherwise) and are logged with the user.
 * `auth.*` attributes, authorization and cookie values are never shown. The page itself holds
 * no data; it asks for a bearer token when the API answers 401.
 *
 * @module
 */

import { endpoint } from "@fw/application";
import { compileEndpoint } from "@fw/application/compile";
import { busOf } from "@fw/events";
import type { AppContext, Plugin } from "@fw/runtime";
import { apiRoutes, type Start } from "./_api.ts";
import { Feed } from "./_feed.ts";
import { type RequestCounter, requestCounter } from "./_requests.ts";
import { RingTracer } from "./_ring_tracer.ts";
import { appSchedules } from "./_scheduler_source.ts";
import { SpanRing, type TraceSource } from "./traces.ts";
import { StatsMeter } from "./_meter.ts";
import { type DashboardOptions, resolveOptions } from "./_options.ts";
import { Stats } from "./_stats.ts";
import type { ViewSources } from "./_views.ts";
import { pageHtml } from "./assets/page.ts";
import { script } from "./assets/script.ts";
import { style } from "./assets/style.ts";

export type { EventServerSource } from "./_views.ts";
export type { DashboardOptions } from "./_options.ts";

/** The dashboard plugin. */
export interface DashboardPlugin extends Plugin {
  /** Where it is mounted, such as `/_fw`. */
  readonly path: string;
  /** Pages that hold the live stream open now. */
  readonly openPages: number;
}

const ASSET_HEADERS = { "cache-control": "no-cache", "x-content-type-options": "nosniff" };
const PAGE_HEADERS = {
  ...ASSET_HEADERS,
  "content-type": "text/html; charset=utf-8",
  "content-security-policy":
    "default-src 'none'; script-src 'self'; style-src 'self' 'unsafe-inline'; connect-src 'self'; img-src 'self' data:; frame-ancestors 'none'; base-uri 'none'; form-action 'self'",
  "referrer-policy": "no-referrer",
};

/**
 * Creates the dashboard plugin.
 *
 * @param options `secure` (required), path, sources and timings.
 * @returns The plugin for `application().use()`.
 * @throws {TypeError} At once, for missing `secure` or other invalid options (named).
 * @throws {Error} At start-up: `secure: false` with `NODE_ENV=production`, or `telemetry()` added
 *   after the dashboard.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { application } from "@fw/application";
 * import { dashboard } from "@fw/dashboard";
 *
 * const app = application().use(dashboard({ secure: false }));
 * const page = await app.request("/_fw/");
 * assert.equal(page.status, 200);
 * const overview = await (await app.request("/_fw/api/overview")).json();
 * assert.deepEqual(overview.handlers, []);
 * await app.stop();
 * ```
 */
export function dashboard(options: DashboardOptions): DashboardPlugin {
  const o = resolveOptions(options);
  let stats: Stats | undefined;
  let meter: StatsMeter | undefined;
  let feed: Feed | undefined;
  let tracer: RingTracer | undefined;
  let requests: RequestCounter | undefined;
  let traces: TraceSource | undefined = options.traces;
  let base = o.path;
  return {
    name: "dashboard",
    get path() {
      return base;
    },
    get openPages() {
      return feed?.pages ?? 0;
    },
    setup(ctx: AppContext) {
      if (o.secure === false && ctx.production) {
        throw new Error(
          'dashboard() option "secure: false" is refused when NODE_ENV is "production": guard it with secure: { roles: [...] } and oauth()',
        );
      }
      const s = stats = new Stats(o.windowSeconds);
      const clock = ctx.clock;
      ctx.setMeter(meter = new StatsMeter(ctx.meter, s, clock));
      // traces: the app's spans (telemetry()) also go to a ring of the dashboard's own
      const ring = options.traces === undefined ? new SpanRing() : options.traces;
      if (ring instanceof SpanRing && ctx.tracer?.enabled && ctx.setTracer) {
        ctx.setTracer(tracer = new RingTracer(ctx.tracer, ring, () => base));
        traces = ring;
      }
      if (ctx.observeRequests === undefined) {
        throw new Error(
          "dashboard() needs an application context with observeRequests(): use it with application()",
        );
      }
      requests = requestCounter(s, clock);
      ctx.observeRequests(requests.observer);
    },
    warmup(ctx: AppContext) {
      if (ctx.meter !== meter) {
        throw new Error(
          "dashboard() must come after telemetry() in use(): a later plugin replaced the meter the dashboard counts events with",
        );
      }
      if (tracer !== undefined && ctx.tracer !== tracer) {
        throw new Error(
          "dashboard() must come after telemetry() in use(): a later plugin replaced the tracer the dashboard keeps traces from",
        );
      }
      base = `${ctx.prefix}${o.path}`;
      const sources: ViewSources = {
        stats: stats!,
        clock: ctx.clock,
        logger: ctx.logger,
        bus: () => busOf(ctx.container),
        skipRoutes: base,
        ...(options.eventServer ? { eventServer: options.eventServer } : {}),
        schedules: options.schedules ?? appSchedules(ctx.container),
        ...(traces ? { traces } : {}),
      };
      feed = new Feed(sources, { intervalMs: o.intervalMs, queuesEvery: 5 });
      addAssets(ctx, base);
      const f = feed;
      const secure = o.secure;
      // the guarded builder documents 401/403 in its type; the routes are built the same either way
      const start =
        (() => secure === false ? endpoint() : endpoint().secure(secure)) as unknown as Start;
      const services = { ...sources, feed: f, trustProxy: () => ctx.http.trustProxy };
      for (const r of apiRoutes(services, start)) {
        const def = r.definition;
        const route = `${base}/api${r.path}`;
        ctx.addRoute({
          method: r.method,
          path: route,
          handler: compileEndpoint(def, { method: r.method, route, app: ctx }),
          source: "dashboard()",
        });
      }
    },
    drain() {
      feed?.close();
    },
    stop() {
      feed?.close();
      requests?.stop();
    },
  };
}

/** The page, its script and its style: public, they hold no data. */
function addAssets(ctx: AppContext, base: string): void {
  const html = pageHtml(base);
  const add = (path: string, body: string, headers: Record<string, string>) =>
    ctx.addRoute({
      method: "GET",
      path,
      handler: compileEndpoint(endpoint().handle(() => new Response(body, { headers })), {
        method: "GET",
        route: path,
        app: ctx,
      }),
      source: "dashboard()",
    });
  add(`${base}/`, html, PAGE_HEADERS);
  add(`${base}/app.js`, script, {
    ...ASSET_HEADERS,
    "content-type": "text/javascript; charset=utf-8",
  });
  add(`${base}/app.css`, style, { ...ASSET_HEADERS, "content-type": "text/css; charset=utf-8" });
}
