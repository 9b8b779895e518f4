import { createLogger, Int, MinLength, Uuid } from "@fw/runtime";
import { EventBus } from "./event_bus.ts";
import { handler } from "./handler.ts";
import { MemoryBroker } from "./transports/memory_broker.ts";
import { getPublisher } from "./publisher.ts";
import { topic } from "./topic.ts";

const Order = topic("bench.order", { id: Uuid, customer: MinLength(1), items: Int, total: Int });
const payload = { id: "6f1c2a5e-8a3b-4f1e-9d2c-1b2a3c4d5e6f", customer: "c", items: 1, total: 5 };
const quiet = createLogger({ level: "warn" });

async function bus(fn?: (m: unknown) => unknown) {
  const b = new EventBus({ transports: { memory: new MemoryBroker() }, logger: quiet });
  if (fn) await b.add(handler(Order).handle(fn));
  await b.start();
  return getPublisher(Order, { bus: b });
}

const none = await bus();
const sync = await bus(() => {});
const asyncH = await bus(async () => {
  await Promise.resolve();
});

Deno.bench("validate only", { group: "events" }, () => {
  Order.validate(payload);
});
Deno.bench("publish, no subscriber", { group: "events" }, async () => {
  await none(payload);
});
Deno.bench("publish + sync handler", { group: "events" }, async () => {
  await sync(payload);
});
Deno.bench("publish + async handler", { group: "events" }, async () => {
  await asyncH(payload);
});
