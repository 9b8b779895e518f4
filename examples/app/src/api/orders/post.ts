import { ArrayOf, DateIso, endpoint, Int, Min, MinLength, Optional, Uuid } from "@fw/application";

/** POST /orders: a 7-field body and a `.returns()` schema (the benchmark's scenario c). */
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
    return { id: order.id, status: "accepted", items: order.items.length };
  });
