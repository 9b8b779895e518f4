import { endpoint, NotFoundException, Uuid } from "@fw/application";
import { Order } from "../../../schemas.ts";
import { Store } from "../../../services.ts";

/** GET /orders/:id: an order and its payment status. */
export default endpoint()
  .params({ id: Uuid })
  .returns(Order)
  .mayThrow("NotFound")
  .inject({ store: Store })
  .handle(async ({ store }, ctx) => {
    const order = await store.getOrder(ctx.params.id);
    if (!order) throw new NotFoundException(`Order "${ctx.params.id}" not found`);
    return order;
  });
