import { ArrayOf, endpoint, Optional } from "@fw/application";
import { Audit } from "../../audit.ts";

/** GET /audit: what the event handlers recorded, most recent last. */
export default endpoint()
  .inject({ audit: Audit })
  .description("Entries written by the event handlers in events/")
  .returns(ArrayOf({ event: String, orderId: String, traceId: String, user: Optional(String) }))
  .handle(({ audit }) => audit.entries);
