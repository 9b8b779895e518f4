import { MemoryBroker } from "./memory_broker.ts";
import { runTransportConformance } from "./conformance.ts";

const brokers = new Map<string, MemoryBroker>();

runTransportConformance("MemoryBroker", {
  create: (ns) => {
    let broker = brokers.get(ns);
    if (!broker) brokers.set(ns, broker = new MemoryBroker());
    return broker;
  },
  cleanup: (namespaces) => void namespaces.forEach((ns) => brokers.delete(ns)),
});
