/**
 * The plugin's wiring and the in-process broker, in one module for the `events()` plugin's
 * `await import()` (one dynamic import instead of two when an app runs on the in-process broker).
 *
 * @module
 */

export { activate, wire } from "./_wire.ts";
export { MemoryBroker } from "./transports/memory_broker.ts";
