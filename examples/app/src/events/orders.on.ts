import { handler, useContext } from "@fw/events/core";
import type { EventContext } from "@fw/events/core";
import { OrderPlaced } from "../topics.ts";
import { Audit } from "../audit.ts";

/** Fulfilment: competing consumers of `orders.placed` (one instance handles each order). */
export default handler(OrderPlaced)
  .options({ group: "fulfilment", maxRetries: 5, concurrency: 10 })
  .inject({ audit: Audit })
  .handle(({ audit }, msg) => {
    const ctx = useContext<EventContext>();
    audit.add({
      event: "fulfilment.queued",
      orderId: msg.payload.id,
      traceId: ctx.traceId,
      ...(msg.attributes["auth.sub"] ? { user: msg.attributes["auth.sub"] } : {}),
    });
  });

/** Analytics: a second subscription group that sees every order too. */
export const analytics = handler(OrderPlaced)
  .options({ group: "analytics" })
  .inject({ audit: Audit })
  .handle(({ audit }, msg) => {
    audit.add({ event: "analytics.counted", orderId: msg.payload.id, traceId: msg.traceId });
  });
