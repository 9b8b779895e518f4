import { endpoint } from "@fw/application";
import { ADMIN_SCOPE } from "../../../../config.ts";
import { Product, ProductInput, Sku } from "../../../../schemas.ts";
import { Store } from "../../../../services.ts";

/** PUT /admin/products/:sku: creates or replaces a product (admin scope). */
export default endpoint()
  .description("Creates or replaces a product")
  .secure({ scopes: [ADMIN_SCOPE] })
  .params({ sku: Sku })
  .body(ProductInput)
  .returns(Product)
  .inject({ store: Store })
  .handle(async ({ store }, ctx) => store.putProduct({ sku: ctx.params.sku, ...await ctx.body() }));
