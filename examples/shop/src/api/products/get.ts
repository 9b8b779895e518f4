import { ArrayOf, endpoint } from "@fw/application";
import { Product } from "../../schemas.ts";
import { Store } from "../../services.ts";

/** GET /products: the catalogue. */
export default endpoint()
  .description("Every product, by SKU; prices in cents")
  .returns(ArrayOf(Product))
  .inject({ store: Store })
  .handle(({ store }) => store.listProducts());
