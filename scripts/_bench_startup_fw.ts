/**
 * Start-up benchmark subject: fw with one route, `application().use(http()).use(api())` with the
 * route registered explicitly (`scripts/bench_startup.ts`).
 *
 * @module
 */

import { api, application, endpoint, http } from "@fw/application";

await application()
  .use(http({ port: Number(Deno.env.get("PORT")), hostname: "127.0.0.1" }))
  .use(api({ autoScan: false }).route("GET", "/", endpoint(() => "Hello, world")))
  .start();
