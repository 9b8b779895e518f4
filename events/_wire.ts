/**
 * What the `events()` plugin does once it makes its bus: build the bus over its transports
 * (`_in_process.ts` makes the in-process broker first), add the handlers and schedules, then start
 * them and make publishers use the bus. It loads with the bus (through `_in_process.ts`, or by
 * itself with explicit transports): at warmup, or in production on the in-process broker on first use, so
 * `@fw/events/core` does not load it.
 *
 * @module
 */

import type { AppContext } from "@fw/runtime";
import { EventBus } from "./event_bus.ts";
import type { HandlerDefinition } from "./handler_types.ts";
import { activateBus, attachBus } from "./publisher.ts";
import type { ScheduleDefinition } from "./schedule/schedule_types.ts";
import type { Scheduler } from "./schedule/scheduler.ts";
import type { RouteRule } from "./routing.ts";
import type { MemoryBroker } from "./transports/memory_broker.ts";
import type { Transport } from "./transport.ts";

/** The `events()` options the wiring reads (the plugin's `EventsOptions` has them). */
export interface WireOptions {
  /** The in-memory broker redelivers about 2% of handled messages. */
  simulateDuplicates?: boolean;
  /** Dead letters the in-memory broker keeps. */
  deadLetterLimit?: number;
  /** Randomness for retry jitter and duplicates. */
  random?: () => number;
  /** Fallback transport name. */
  defaultTransport?: string;
  /** Routing rules. */
  routes?: readonly RouteRule[];
}

/** The plugin's parts, set as they are made (so the plugin can stop what a failed start made). */
export interface Wiring {
  bus?: EventBus;
  broker?: MemoryBroker;
  scheduler?: Scheduler;
}

/**
 * Makes the bus over `transports` and adds handlers and schedules.
 *
 * @param ctx The application's context.
 * @param options The plugin's options.
 * @param into Where the bus and scheduler go, as each is made.
 * @param transports The transports.
 * @param found The handlers, with their sources.
 * @param timed The schedules, with their sources.
 */
export async function wire(
  ctx: AppContext,
  options: WireOptions,
  into: Wiring,
  transports: Readonly<Record<string, Transport>>,
  found: ReadonlyArray<[string | undefined, HandlerDefinition]>,
  timed: ReadonlyArray<[string | undefined, ScheduleDefinition]>,
): Promise<void> {
  const services = {
    transports,
    defaultTransport: options.defaultTransport,
    clock: ctx.clock,
    logger: ctx.logger,
    meter: ctx.meter,
    ...(ctx.tracer ? { tracer: ctx.tracer } : {}),
    container: ctx.container,
    ...(options.random ? { random: options.random } : {}),
  };
  const made = into.bus = new EventBus({ ...services, routes: options.routes });
  for (const [source, def] of found) {
    await made.add(def, def.name ?? source ?? undefined, source);
  }
  if (timed.length > 0) {
    const { Scheduler } = await import("./schedule/scheduler.ts");
    const scheduler = into.scheduler = new Scheduler(services);
    for (const [source, def] of timed) scheduler.add(def, source);
  }
}

/**
 * Starts the bus and the scheduler and makes publishers use the bus.
 *
 * @param ctx The application's context.
 * @param wired The bus (and scheduler) {@linkcode wire} made.
 * @param use Makes the bus the one publishers use (default `activateBus()`).
 * @returns A function that undoes what `use` and the attachments did.
 */
export async function activate(
  ctx: AppContext,
  wired: Wiring,
  use: (bus: EventBus) => () => void = activateBus,
): Promise<() => void> {
  const { bus, scheduler } = wired;
  await bus!.start();
  await scheduler?.start();
  const undoActive = use(bus!);
  const detach = attachBus(ctx.container, bus!);
  const detachScheduler = scheduler &&
    (await import("./schedule/scheduler.ts")).attachScheduler(ctx.container, scheduler);
  return () => {
    undoActive();
    detach();
    detachScheduler?.();
  };
}
