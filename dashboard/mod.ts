/**
 * `@fw/dashboard`: the operations dashboard of an fw application. One plugin, `dashboard()`,
 * serves a page and a JSON API (under `/_fw/` by default) that show routes, topics, handlers,
 * queues, dead letters (with redrive and discard), the Event Server, schedules and traces, live
 * over one Server-Sent Events stream per open page. Its page, script and style are modules of
 * this package: no build step, no CDN, no file read at run time.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { application } from "@fw/application";
 * import { dashboard } from "@fw/dashboard";
 *
 * const app = application().use(dashboard({ secure: { roles: ["admin"] } }));
 * assert.equal((await app.request("/_fw/api/dead-letters")).status, 401); // no token
 * await app.stop();
 * ```
 *
 * @module
 */

export {
  dashboard,
  type DashboardOptions,
  type DashboardPlugin,
  type EventServerSource,
} from "./dashboard.ts";
export type { ScheduleSource, ScheduleView } from "./schedules.ts";
export {
  type FinishedSpan,
  type SpanLogLine,
  SpanRing,
  type SpanRingOptions,
  type TraceSource,
  type TraceSummary,
  type WaterfallSpan,
} from "./traces.ts";
