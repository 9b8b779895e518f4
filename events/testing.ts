/**
 * Test support for transport authors: the conformance suite every transport passes.
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
