/**
 * Start-up benchmark subject: the bare `Deno.serve` of `_bench_startup_bare.ts` plus an
 * `AsyncLocalStorage` from `node:async_hooks`, which fw's async context is built on: the part of
 * fw's start-up that Deno's Node.js compatibility layer sets (`scripts/bench_startup.ts`).
 *
 * @module
 */

import { AsyncLocalStorage } from "node:async_hooks";

const storage = new AsyncLocalStorage<string>();
Deno.serve(
  { port: Number(Deno.env.get("PORT")), hostname: "127.0.0.1", onListen: () => {} },
  () => storage.run("request", () => new Response("Hello, world")),
);
