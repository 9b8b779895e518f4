import { endpoint, Stream } from "@fw/application";
import { OrderSummary, summaryOf } from "../../schemas.ts";
import { Live, Store } from "../../services.ts";

/**
 * GET /orders/live: the dashboard's feed (Server-Sent Events, or a WebSocket). It opens with the
 * 20 most recent orders, oldest first, then sends every change as it happens.
 */
export default endpoint()
  .description("Recent orders, then every change as it happens")
  .returns(Stream(OrderSummary))
  .inject({ store: Store, live: Live })
  .handle(async ({ store, live }, ctx) => {
    const updates = live.subscribe(ctx.signal); // subscribe first: no change is missed
    const recent = await store.recentOrders(20);
    for (const order of recent.reverse()) await ctx.send(summaryOf(order));
    for await (const summary of updates) await ctx.send(summary);
  });
