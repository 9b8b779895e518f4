/**
 * The example app `deno task dev` runs: every route file convention and every response
 * kind fw supports, plus typed events. Routes live in `api/`, event handlers in
 * `events/` (`*.on.ts`); `deno task generate` writes `.gen/api.gen.ts`, `.gen/events.gen.ts` and
 * `.gen/openapi.json`. The loaders are imported here, statically, so a bundle (Deno Deploy) carries
 * every route and handler and start-up reads no file; `deno task dev` writes them again as files
 * come or go. The document is served at `/openapi.json`, Swagger UI at `/docs`.
 * With no transport configured, events run on the embedded in-memory broker, which also serves
 * the local broker on 127.0.0.1:4222 (`EVENTS_BROKER_PORT`) for other local processes.
 *
 * @module
 */

import { api, application, http } from "@fw/application";
import { events } from "@fw/events/core";
import routes from "./.gen/api.gen.ts";
import handlers from "./.gen/events.gen.ts";

/** The application (exported so tests can call `app.fetch()` without a socket). */
export const app = application({ root: import.meta.url })
  .use(http({ port: Number(Deno.env.get("PORT") ?? 8000), hostname: "127.0.0.1" }))
  .use(api({
    manifest: routes,
    openapi: {
      title: "fw example app",
      version: "1.0.0",
      description: "Every route file convention and every response kind fw supports.",
      docs: "/docs",
    },
  }))
  // the local broker serves other processes on this machine: not on Deno Deploy
  .use(
    events({
      manifest: handlers,
      brokerPort: Deno.env.get("DENO_DEPLOYMENT_ID") ? false : undefined,
    }),
  );

if (import.meta.main) {
  await app.start();
  const url = app.address?.url;
  console.log(`fw example app: try ${url}/health, ${url}/users and the API docs at ${url}/docs`);
}
