import { ArrayOf, endpoint, Optional } from "@fw/application";
import { Audit } from "../../audit.ts";

/** GET /audit: what the event handlers recorded, most recent last (rate limited per client). */
export default endpoint()
  .inject({ audit: Audit })
  .description("Entries written by the event handlers in events/")
  .rateLimit({ max: 120, windowMs: 60_000 })
  .returns(ArrayOf({ event: String, orderId: String, traceId: String, user: Optional(String) }))
  .handle(({ audit }) => audit.entries);
