import { ArrayOf, DateIso, endpoint, Int, Min, MinLength, Optional, Uuid } from "@fw/application";
import { getPublisher } from "@fw/events/core";
import { OrderPlaced } from "../../topics.ts";

const publishOrder = getPublisher(OrderPlaced);

/**
 * POST /orders: a 7-field body and a `.returns()` schema (the benchmark's scenario c). The order
 * is published as `orders.placed`; handlers in `events/` pick it up with this request's trace id.
 */
export default endpoint()
  .body({
    id: Uuid,
    customer: MinLength(1),
    items: ArrayOf({ sku: MinLength(1), qty: Min(1, Int) }),
    total: Min(0),
    currency: MinLength(3),
    note: Optional(String),
    placedAt: DateIso,
  })
  .returns(201, "Accepted", { id: Uuid, status: String, items: Int })
  .handle(async (ctx) => {
    const order = await ctx.body();
    await publishOrder(
      { id: order.id, customer: order.customer, items: order.items.length, total: order.total },
      { attributes: { size: order.total >= 1000 ? "large" : "small" } },
    );
    return { id: order.id, status: "accepted", items: order.items.length };
  });
