import { endpoint, HttpResponse } from "@fw/application";

/** GET /redirect: an HttpResponse is sent as given. */
export default endpoint()
  .returns(302, "Found: redirects to /health")
  .handle(() => HttpResponse.redirect("/health", 302));
