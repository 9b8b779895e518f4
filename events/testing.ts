/**
 * Test support for transport and realtime-broker authors: the conformance suites every transport
 * (`runTransportConformance`) and every realtime broker (`runRealtimeConformance`) passes, and
 * the suite of the schedule state a transport keeps (`runScheduleStoreConformance`).
 *
 * @example
 * ```ts ignore
 * import { runTransportConformance } from "@fw/events/testing";
 * import { MemoryBroker } from "@fw/events";
 * const brokers = new Map<string, MemoryBroker>();
 * runTransportConformance("MemoryBroker", {
 *   create: (ns) => brokers.get(ns) ?? brokers.set(ns, new MemoryBroker()).get(ns)!,
 * });
 * ```
 *
 * @module
 */

export { runTransportConformance, type TransportHarness } from "./transports/conformance.ts";
export {
  compareRealtimeIds,
  type RealtimeHarness,
  type RealtimeHarnessOptions,
  runRealtimeConformance,
} from "./realtime/conformance.ts";
export {
  type ConformanceOptions,
  type ConformanceReport,
  type ConformanceStepResult,
  runEventServerConformance,
} from "./protocol/conformance.ts";
export {
  type OpenedScheduleStore,
  runScheduleStoreConformance,
  type ScheduleStoreHarness,
} from "./schedule/store_conformance.ts";
