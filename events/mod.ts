/**
 * `@fw/events`: typed event messaging for fw.
 *
 * - `topic(name, schema, options)` declares an event kind; `getPublisher(Topic)` validates and
 *   publishes; `handler(Topic)` subscribes with retries, back-off, competing or broadcast
 *   delivery, filters, concurrency limits, manual ack and dead-lettering.
 * - `schedule(name)` runs work on a cron schedule, once per tick across instances.
 * - `events({...})` is the application plugin: it discovers `*.on.ts` handler files, routes topics
 *   to transports, and runs the local development broker.
 * - `MemoryBroker` is the in-process transport; `EventBus` runs handlers over any transports; the
 *   `Transport` interface and the conformance suite (`@fw/events/testing`) let other transports
 *   plug in.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { EventBus, getPublisher, handler, Int, MemoryBroker, topic, Uuid } from "@fw/events";
 *
 * const OrderCreated = topic("orders.created", { id: Uuid, total: Int });
 * const bus = new EventBus({ transports: { memory: new MemoryBroker() } });
 * const totals: number[] = [];
 * await bus.add(handler(OrderCreated).options({ group: "billing" }).handle((msg) => {
 *   totals.push(msg.payload.total);
 * }));
 * await bus.start();
 * await getPublisher(OrderCreated, { bus })({ id: crypto.randomUUID(), total: 42 });
 * await bus.stop();
 * assert.deepEqual(totals, [42]);
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
  activateBus,
  busOf,
  getPublisher,
  type GetPublisherOptions,
  needBus,
  type Publisher,
  type PublishOptions,
  type PublishReceipt,
} from "./publisher.ts";
export { type Envelope, envelopeProblem, newMessageId, newTraceId } from "./envelope.ts";
export { retryDelay } from "./backoff.ts";
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
export {
  Scheduler,
  schedulerOf,
  type SchedulerOptions,
  type ScheduleStatus,
} from "./schedule/scheduler.ts";
export {
  type LastRun,
  MemoryScheduleStore,
  type RunRecord,
  type ScheduleRecord,
  type ScheduleStore,
  type StoredSchedule,
} from "./schedule/store.ts";
export {
  Consumer,
  type ConsumerOptions,
  type DeliveryOutcome,
  type EventContext,
} from "./consumer.ts";
export {
  EventBus,
  type EventBusOptions,
  type HandlerLoad,
  type Registration,
  type StoredDeadLetter,
} from "./event_bus.ts";
export { createTransportRouter, type RouteRule, type TransportRouter } from "./routing.ts";
export { MemoryBroker, type MemoryBrokerOptions } from "./transports/memory_broker.ts";
export { events, type EventsOptions, type EventsPlugin } from "./events_plugin.ts";
export {
  type EventServerTransport,
  eventServerTransport,
  type EventServerTransportOptions,
} from "./transports/eventserver/eventserver.ts";
export {
  type EventServerOutcome,
  EventServerPublishError,
} from "./transports/eventserver/errors.ts";
export {
  type LocalBroker,
  type LocalBrokerOptions,
  serveLocalBroker,
} from "./transports/http_broker/_local_server.ts";
export {
  type HttpBrokerOptions,
  httpBrokerTransport,
} from "./transports/http_broker/http_broker.ts";
export { MemoryDeadLetters, type MemoryDeadLettersOptions } from "./dead_letters.ts";
export {
  type Admission,
  type DeadLetter,
  type DeadLetterStore,
  type Delivery,
  type DeliveryListener,
  QueueFullError,
  type QueueStats,
  type Subscription,
  type SubscriptionSpec,
  type Transport,
  type TransportCapabilities,
  type TransportPublishOptions,
} from "./transport.ts";
export type {
  RealtimeBroker,
  RealtimeCapabilities,
  RealtimeGap,
  RealtimeMessage,
  RealtimeSubscribeOptions,
  RealtimeSubscription,
  RealtimeTopic,
} from "./realtime/realtime.ts";
export { RealtimeCursorError } from "./realtime/realtime.ts";
export {
  MemoryRealtime,
  memoryRealtime,
  type MemoryRealtimeOptions,
} from "./realtime/memory_realtime.ts";
