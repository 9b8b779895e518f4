import { endpoint, HttpResponse } from "@fw/application";

/** GET /redirect: an HttpResponse is sent as given. */
export default endpoint(() => HttpResponse.redirect("/health", 302));
