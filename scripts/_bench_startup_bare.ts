/**
 * Start-up benchmark subject: a bare `Deno.serve` answering `GET /` (`scripts/bench_startup.ts`).
 *
 * @module
 */

Deno.serve(
  { port: Number(Deno.env.get("PORT")), hostname: "127.0.0.1", onListen: () => {} },
  () => new Response("Hello, world"),
);
