import { api, application, endpoint, Int, Stream, SseStream } from "@fw/application";
import { createLogger, runInContext } from "@fw/runtime";
import { compileStreamEndpoint } from "@fw/application";
const gc = (globalThis as any).gc;
const N = 5000;
const mode = Deno.args[0];
const idle = endpoint().returns(Stream({ n: Int })).handle((ctx) =>
  new Promise<void>((resolve) => ctx.signal.addEventListener("abort", () => resolve()))
);
const app = application({ logger: createLogger({ level: "warn" }) }).use(api({ autoScan: false }).route("GET", "/idle", idle));
await app.warmup();
const keep: unknown[] = [];
const direct = compileStreamEndpoint(idle, { method: "GET", route: "/idle", app: app.context });
const info = { server: { hostname: "x", port: 0, url: "http://x" } };
// warm
for (let i = 0; i < 100; i++) keep.push(mode === "raw" ? new SseStream().response() : await app.request("/idle", { headers: { accept: "text/event-stream" } }));
gc(); gc();
const h0 = Deno.memoryUsage().heapUsed;
for (let i = 0; i < N; i++) {
  if (mode === "raw") keep.push(new SseStream().response());
  else if (mode === "bare") { const s = new ReadableStream({ pull() {}, cancel() {} }, { highWaterMark: 0 }); keep.push(new Response(s, { headers: { "content-type": "text/event-stream" } })); }
  else if (mode === "req") keep.push(new Request(new URL("/idle", "http://localhost"), { headers: { accept: "text/event-stream" } }), new SseStream().response());
  else if (mode === "ac") { const ac = new AbortController(); const p = new Promise<void>((r) => ac.signal.addEventListener("abort", () => r())); keep.push(ac, p); }
  else if (mode === "direct") keep.push(await direct(new Request(new URL("/idle", "http://localhost"), { headers: { accept: "text/event-stream" } }), {}, info));
  else if (mode === "ctx") keep.push(await runInContext({ a: 1 }, () => direct(new Request(new URL("/idle", "http://localhost"), { headers: { accept: "text/event-stream" } }), {}, info)));
  else keep.push(await app.request("/idle", { headers: { accept: "text/event-stream" } }));
}
gc(); gc();
console.log(mode, "heap per conn B", Math.round((Deno.memoryUsage().heapUsed - h0) / N));
Deno.exit(0);
