import { handler } from "@fw/events/core";
import { OrderPlaced } from "../../topics.ts";
import { Audit } from "../../audit.ts";

/** Notifies on large orders only: the publisher sets the `size` attribute, the filter picks. */
export const largeOrders = handler(OrderPlaced)
  .options({ group: "notifications" })
  .filter({ attributes: { size: "large" } })
  .inject({ audit: Audit })
  .handle(({ audit }, msg) => {
    audit.add({ event: "notification.sent", orderId: msg.payload.id, traceId: msg.traceId });
  });
