/**
 * The plugin's wiring over the in-process broker, in one module for the `events()` plugin's
 * `await import()` (one dynamic import instead of two when an app runs on the in-process broker;
 * with explicit transports the plugin imports `_wire.ts` alone, without the broker).
 *
 * @module
 */

import type { AppContext } from "@fw/runtime";
import type { HandlerDefinition } from "./handler_types.ts";
import type { ScheduleDefinition } from "./schedule/schedule_types.ts";
import { MemoryBroker } from "./transports/memory_broker.ts";
import { wire, type WireOptions, type Wiring } from "./_wire.ts";

export { activate } from "./_wire.ts";

/**
 * Makes the in-process broker, then the bus over it ({@linkcode wire}).
 *
 * @param ctx The application's context.
 * @param options The plugin's options.
 * @param into Where the broker, the bus and the scheduler go, as each is made.
 * @param found The handlers, with their sources.
 * @param timed The schedules, with their sources.
 */
export function wireInProcess(
  ctx: AppContext,
  options: WireOptions,
  into: Wiring,
  found: ReadonlyArray<[string | undefined, HandlerDefinition]>,
  timed: ReadonlyArray<[string | undefined, ScheduleDefinition]>,
): Promise<void> {
  const broker = into.broker = new MemoryBroker({
    clock: ctx.clock,
    logger: ctx.logger,
    meter: ctx.meter,
    simulateDuplicates: options.simulateDuplicates ?? false,
    ...(options.deadLetterLimit !== undefined ? { deadLetterLimit: options.deadLetterLimit } : {}),
    ...(options.random ? { random: options.random } : {}),
  });
  return wire(ctx, options, into, { memory: broker }, found, timed);
}
