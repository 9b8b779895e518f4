/**
 * The process `scripts/soak.ts` runs: the example app (`examples/app`, HTTP routes and events on
 * its embedded broker, which it also serves as the local HTTP broker) and the streams example
 * (`examples/streams`, SSE and WebSocket) in one process, plus `GET /__soak/memory` on the example
 * app answering `Deno.memoryUsage()` after a full garbage collection (run with
 * `--v8-flags=--expose-gc`) and the count of unhandled promise rejections (counted rather than
 * ending the process, so that the soak can report them). Prints one JSON line with the URLs once both listen; stops on SIGTERM.
 *
 * @module
 */

import type { Plugin } from "@fw/runtime";
import { app } from "../examples/app/src/main.ts";
import { streamsApp } from "../examples/streams/src/main.ts";

/** Rejections nobody handled: counted (and the first printed) instead of ending the process. */
let unhandled = 0;
globalThis.addEventListener("unhandledrejection", (event) => {
  event.preventDefault();
  if (unhandled++ === 0) console.error("soak host: unhandled rejection:", event.reason);
});

const memory: Plugin = {
  name: "soak-memory",
  warmup(ctx) {
    ctx.addRoute({
      method: "GET",
      path: "/__soak/memory",
      handler: () => {
        (globalThis as { gc?: () => void }).gc?.();
        return Response.json({ ...Deno.memoryUsage(), unhandled });
      },
    });
  },
};

const streams = streamsApp({ port: 0, signals: false });
app.use(memory);
await app.start();
await streams.start();
Deno.addSignalListener("SIGTERM", () => {
  // the example app's own http() handles SIGTERM for it; the streams app follows
  streams.stop().catch(() => {});
});
console.log(JSON.stringify({ app: app.address!.url, streams: streams.address!.url }));
