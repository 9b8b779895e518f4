import { endpoint, HttpResponse } from "@fw/application";

/** GET /files/*: a catch-all; `ctx.params.path` holds the slash-joined remainder. */
export default endpoint()
  .returns(String)
  .handle((ctx) =>
    new HttpResponse(`file: ${ctx.params.path}`, {
      headers: { "content-type": "text/plain;charset=UTF-8" },
    })
      .setHeader("cache-control", "no-store")
  );
