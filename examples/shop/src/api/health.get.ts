import { endpoint } from "@fw/application";

/** GET /health: for load balancers and uptime checks. */
export default endpoint()
  .returns({ ok: Boolean })
  .handle(() => ({ ok: true }));
