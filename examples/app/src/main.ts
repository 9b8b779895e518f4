/**
 * The example app `deno task dev` runs: every route file convention of spec 4.1 and every
 * response kind of spec 4.2. Routes live in `api/`; `deno task generate` writes `.gen/api.gen.ts`
 * and `.gen/openapi.json`. The document is served at `/openapi.json`, Swagger UI at `/docs`.
 *
 * @module
 */

import { api, application, http } from "@fw/application";

/** The application (exported so tests can call `app.fetch()` without a socket). */
export const app = application({ root: import.meta.url })
  .use(http({ port: Number(Deno.env.get("PORT") ?? 8000), hostname: "127.0.0.1" }))
  .use(api({
    openapi: {
      title: "fw example app",
      version: "1.0.0",
      description: "Every route convention of spec 4.1 and every response kind of spec 4.2.",
      docs: "/docs",
    },
  }));

if (import.meta.main) {
  await app.start();
  const url = app.address?.url;
  console.log(`fw example app: try ${url}/health, ${url}/users and the API docs at ${url}/docs`);
}
