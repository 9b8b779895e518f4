/**
 * The streaming example: a live quote feed over Server-Sent Events and chat rooms over
 * WebSockets, with a browser page at `/`.
 *
 * ```sh
 * deno run -A examples/streams/src/main.ts   # then open http://127.0.0.1:8000/
 * ```
 *
 * Routes (`src/api/`): `GET /feed` (server stream: SSE or WebSocket, resumes after
 * `Last-Event-ID`), `GET /chat/:room?name=` (`[room].ws.ts`, bidirectional stream) and
 * `GET /stats`; the OpenAPI document at `/openapi.json`. The route loader (`.gen/api.gen.ts`) and the page are imported, so the app runs
 * from a bundle with no file-system access.
 *
 * @module
 */

import {
  api,
  type Application,
  application,
  http,
  type Plugin,
  type StreamOptions,
} from "@fw/application";
import html from "../public/index.html" with { type: "text" };
import routes from "./.gen/api.gen.ts";

/** Serves the browser page at `/` (imported as text, so a bundle carries it). */
export function page(): Plugin {
  return {
    name: "page",
    warmup(ctx) {
      const headers = { "content-type": "text/html; charset=utf-8" };
      ctx.addRoute({ method: "GET", path: "/", handler: () => new Response(html, { headers }) });
    },
  };
}

/** Options of {@linkcode streamsApp}. */
export interface StreamsAppOptions {
  /** Port (default `PORT` or 8000; 0 picks a free one). */
  port?: number;
  /** Interface (default 127.0.0.1). */
  hostname?: string;
  /** Stream settings (default: 15 s heartbeats, browsers retry after 2 s). */
  streams?: StreamOptions;
  /** Stop on SIGINT/SIGTERM (default true). */
  signals?: boolean;
}

/** Builds the example application. */
export function streamsApp(options: StreamsAppOptions = {}): Application {
  return application({ root: import.meta.url })
    .use(
      http({
        port: options.port ?? Number(Deno.env.get("PORT") ?? 8000),
        hostname: options.hostname ?? "127.0.0.1",
        signals: options.signals,
      }),
    )
    .use(page())
    .use(
      api({
        manifest: routes,
        openapi: { title: "fw streaming example", version: "1.0.0" },
        streams: options.streams ?? { heartbeatMs: 15_000, retryMs: 2_000 },
      }),
    );
}

if (import.meta.main) {
  const app = streamsApp();
  await app.start();
  console.log(`fw streaming example: open ${app.address?.url}/`);
}
