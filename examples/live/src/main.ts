/**
 * The live example: an Event Server with two topics and a page at `/` that follows both over one
 * WebSocket with `eventClient`, served at `/event_client.js` from the browser bundle of
 * `@fw/events/client` that `deno task generate` writes to `.gen/event_client.js`. The page and the
 * bundle are imported as text, so the app reads no file at run time and deploys as one bundle.
 *
 * ```sh
 * deno run -A examples/live/src/main.ts   # then open http://127.0.0.1:8001/
 * ```
 *
 * Publish from anywhere: `curl -X POST localhost:8001/events/publish -H 'content-type:
 * application/json' -d '{"id":"m1","topic":"live.orders","payload":{"n":1,"item":"tea"}}'`.
 * Run as a script, the app also publishes a quote every second.
 *
 * @module
 */

import { type Application, application, http, type Plugin } from "@fw/application";
import type { RealtimeBroker } from "@fw/events";
import { eventServer } from "@fw/events/server";
import page from "../public/index.html" with { type: "text" };
import clientBundle from "./.gen/event_client.js" with { type: "text" };
import { Orders, Quotes } from "./topics.ts";

/** Serves the page at `/` and the bundled client at `/event_client.js`. */
export function livePage(): Plugin {
  return {
    name: "livePage",
    warmup(ctx) {
      ctx.addRoute({
        method: "GET",
        path: "/",
        handler: () =>
          new Response(page, { headers: { "content-type": "text/html; charset=utf-8" } }),
      });
      ctx.addRoute({
        method: "GET",
        path: "/event_client.js",
        handler: () =>
          new Response(clientBundle, {
            headers: { "content-type": "text/javascript; charset=utf-8" },
          }),
      });
    },
  };
}

/** Options of {@linkcode liveApp}. */
export interface LiveAppOptions {
  /** Port (default `PORT` or 8001; 0 picks a free one). */
  port?: number;
  /** Realtime broker (default in-memory); pass one to keep messages across restarts. */
  realtime?: RealtimeBroker;
  /** Stop on SIGINT/SIGTERM (default true). */
  signals?: boolean;
}

/** Builds the live example application. */
export function liveApp(options: LiveAppOptions = {}): Application {
  return application({ root: import.meta.url })
    .use(
      http({
        port: options.port ?? Number(Deno.env.get("PORT") ?? 8001),
        hostname: "127.0.0.1",
        signals: options.signals,
      }),
    )
    .use(livePage())
    .use(eventServer({
      topics: [Orders, Quotes],
      ...(options.realtime ? { realtime: options.realtime } : {}),
    }));
}

if (import.meta.main) {
  const app = liveApp();
  await app.start();
  let n = 0;
  const timer = setInterval(() => {
    n++;
    void fetch(`${app.address!.url}/events/publish`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({
        id: crypto.randomUUID(),
        topic: Quotes.name,
        payload: { n, price: 100 + Math.round(Math.random() * 10) },
      }),
    }).then((r) => r.body?.cancel());
  }, 1000);
  Deno.addSignalListener("SIGINT", () => clearInterval(timer));
  console.log(`fw live example: open ${app.address?.url}/`);
}
