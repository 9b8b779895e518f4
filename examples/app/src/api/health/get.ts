import { endpoint } from "@fw/application";

/** GET /health: a string answers as text/plain. */
export default endpoint()
  .returns(String)
  .handle(() => "ok");
