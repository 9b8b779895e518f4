import { ArrayOf, endpoint, Int, MinLength, Optional } from "@fw/application";
import { ADMIN_SCOPE } from "../../../config.ts";
import { DeadLetters } from "../../../services.ts";

/**
 * POST /admin/dead-letters/redrive: publishes dead letters again on their original topic, with a
 * fresh attempt count (admin scope). `ids` picks some; without it, all of them go.
 */
export default endpoint()
  .description("Publishes dead letters again; all of them when no ids are given")
  .secure({ scopes: [ADMIN_SCOPE] })
  .body({ ids: Optional(ArrayOf(MinLength(1))) })
  .returns({ redriven: Int })
  .inject({ dead: DeadLetters })
  .handle(async ({ dead }, ctx) => {
    const { ids } = await ctx.body();
    return { redriven: await dead.redrive(ids) };
  });
