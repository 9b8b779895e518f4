import { MemoryBroker } from "../memory_broker.ts";
import { type LocalBroker, serveLocalBroker } from "./_local_server.ts";
import { runTransportConformance } from "../conformance.ts";
import { httpBrokerTransport } from "./http_broker.ts";

const servers = new Map<string, { broker: MemoryBroker; server: LocalBroker }>();

runTransportConformance("httpBrokerTransport", {
  create: (ns) => {
    let s = servers.get(ns);
    if (!s) {
      const broker = new MemoryBroker();
      s = { broker, server: serveLocalBroker(broker, { port: 0 }) };
      servers.set(ns, s);
    }
    return httpBrokerTransport({ url: s.server.url });
  },
  cleanup: async (namespaces) => {
    for (const ns of namespaces) {
      const s = servers.get(ns);
      if (!s) continue;
      await s.server.close();
      await s.broker.close();
      servers.delete(ns);
    }
  },
});
