import { ArrayOf, endpoint, Int, Max, Min, Optional } from "@fw/application";
import { ADMIN_SCOPE } from "../../../config.ts";
import { Order } from "../../../schemas.ts";
import { Store } from "../../../services.ts";

/** GET /admin/orders?limit=: the most recent orders with customer data (admin scope). */
export default endpoint()
  .description("The most recent orders, newest first")
  .secure({ scopes: [ADMIN_SCOPE] })
  .query({ limit: Optional(Min(1, Max(100, Int))) })
  .returns(ArrayOf(Order))
  .inject({ store: Store })
  .handle(({ store }, ctx) => store.recentOrders(ctx.queryParams().limit ?? 20));
