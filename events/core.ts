/**
 * `@fw/events/core`: what application code declares and runs events with, and nothing more:
 * `topic()`, `handler()`, `schedule()`, `getPublisher()`, the `events()` plugin, the schema
 * vocabulary and the request context. The same functions and classes as `@fw/events` (which
 * re-exports everything here), without the transports, the realtime broker, the scheduler's
 * runner or the local broker server in the import graph: an app that imports only this entry
 * loads fewer modules before it serves its first request. `events()` loads the parts its options
 * call for (the scheduler, the local broker, the HTTP broker client, the Event Server transport)
 * at start-up.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { application } from "@fw/application";
 * import { events, getPublisher, handler, Int, topic } from "@fw/events/core";
 *
 * const Ping = topic("demo.core.ping", { n: Int });
 * const seen: number[] = [];
 * const app = application().use(events({
 *   autoScan: false,
 *   brokerPort: false,
 *   handlers: [handler(Ping).handle((msg) => void seen.push(msg.payload.n))],
 * }));
 * await app.start();
 * await getPublisher(Ping)({ n: 1 });
 * await app.stop();
 * assert.deepEqual(seen, [1]);
 * ```
 *
 * @module
 */

export * from "./_runtime_exports.ts";
export {
  deadLetterTopic,
  isTopic,
  type PayloadOf,
  type Topic,
  topic,
  type TopicOptions,
} from "./topic.ts";
export { handler, HANDLER_DEFAULTS, isHandlerDefinition } from "./handler.ts";
export type {
  HandleFn,
  HandlerBuilder,
  HandlerDefinition,
  HandlerFilter,
  HandlerOptions,
  Message,
  ResolvedHandlerOptions,
} from "./handler_types.ts";
export {
  getPublisher,
  type GetPublisherOptions,
  type Publisher,
  type PublishOptions,
  type PublishReceipt,
} from "./publisher.ts";
export { isScheduleDefinition, schedule, SCHEDULE_DEFAULTS } from "./schedule/schedule.ts";
export type {
  ResolvedScheduleOptions,
  ScheduleBuilder,
  ScheduleContext,
  ScheduleDefinition,
  ScheduleFn,
  ScheduleOptions,
  ScheduleRun,
} from "./schedule/schedule_types.ts";
export type { DeliveryOutcome, EventContext } from "./consumer.ts";
export { events, type EventsOptions, type EventsPlugin } from "./events_plugin.ts";
// Every type of `@fw/events` (those the plugin's options and accessors name, and theirs):
// type-only, so it loads nothing at run time.
export type * from "./mod.ts";
