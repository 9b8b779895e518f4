import { endpoint } from "@fw/application";
import { Audit } from "../../audit.ts";

/** GET /audit: what the event handlers recorded, most recent last. */
export default endpoint()
  .inject({ audit: Audit })
  .description("Entries written by the event handlers in events/")
  .handle(({ audit }) => audit.entries);
