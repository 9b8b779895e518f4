/**
 * Start-up benchmark subject: Hono with one route (`scripts/bench_startup.ts`).
 *
 * @module
 */

import { Hono } from "hono";

const app = new Hono();
app.get("/", (c) => c.text("Hello, world"));
Deno.serve(
  { port: Number(Deno.env.get("PORT")), hostname: "127.0.0.1", onListen: () => {} },
  app.fetch,
);
