import { BadRequestException, endpoint } from "@fw/application";
import { getPublisher } from "@fw/events";
import { Order, OrderInput, summaryOf } from "../../schemas.ts";
import { Store } from "../../services.ts";
import { OrderChanged, OrderPlaced } from "../../topics.ts";

const placed = getPublisher(OrderPlaced);
const changed = getPublisher(OrderChanged);

/**
 * POST /orders: reserves stock, stores a `pending` order and publishes `shop.orders.placed`; the
 * payments handler charges it in the background (poll `GET /orders/:id` or watch the dashboard).
 */
export default endpoint()
  .description("Places an order; payment happens in the background")
  .body(OrderInput)
  .returns(201, "Order placed, payment pending", Order)
  .mayThrow("BadRequest", "NotFound", "Conflict")
  .inject({ store: Store })
  .handle(async ({ store }, ctx) => {
    const input = await ctx.body();
    if (input.items.length === 0) {
      throw new BadRequestException("An order needs at least one item");
    }
    const order = await store.placeOrder(input);
    await placed(
      { orderId: order.id, total: order.total, paymentToken: input.paymentToken },
      { key: order.id },
    );
    await changed(summaryOf(order));
    return order;
  });
