import { endpoint, NotFoundException } from "@fw/application";
import { Product, Sku } from "../../../schemas.ts";
import { Store } from "../../../services.ts";

/** GET /products/:sku: one product. */
export default endpoint()
  .params({ sku: Sku })
  .returns(Product)
  .mayThrow("NotFound")
  .inject({ store: Store })
  .handle(async ({ store }, ctx) => {
    const product = await store.getProduct(ctx.params.sku);
    if (!product) throw new NotFoundException(`Product "${ctx.params.sku}" not found`);
    return product;
  });
