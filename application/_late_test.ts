import assert from "node:assert/strict";
import type { RequestInfo, RouteHandler } from "@fw/runtime";
import { handlersOnDemand } from "./_late.ts";

const info: RequestInfo = { server: { hostname: "127.0.0.1", port: 0, url: "" } };
const call = (h: RouteHandler) => h(new Request("http://localhost/"), {}, info);
const text = (body: string): RouteHandler => () => new Response(body);

Deno.test("handlersOnDemand() loads once, on the first request, then calls the loaded handlers directly", async () => {
  let loads = 0;
  const handlers = handlersOnDemand(["/a", "/b"], () => {
    loads++;
    return Promise.resolve(new Map([["/a", text("A")], ["/b", text("B")]]));
  });
  assert.deepEqual([...handlers.keys()], ["/a", "/b"]);
  assert.equal(loads, 0, "nothing loads before a request");
  const a = handlers.get("/a")!, b = handlers.get("/b")!;
  const waiting = [call(a), call(b)];
  assert.ok(waiting.every((r) => r instanceof Promise), "the first requests wait for the load");
  assert.deepEqual(await Promise.all(waiting.map(async (r) => (await r).text())), ["A", "B"]);
  assert.equal(loads, 1, "one load for both paths");
  // loaded: the handler's own response, with no promise in between
  const direct = [call(a), call(b)];
  assert.ok(direct.every((r) => r instanceof Response));
  assert.deepEqual(await Promise.all(direct.map((r) => (r as Response).text())), ["A", "B"]);
  assert.equal(loads, 1);
});

Deno.test("handlersOnDemand() hands a failed load to the request that waited for it", async () => {
  const handlers = handlersOnDemand(["/a"], () => Promise.reject(new Error("no module")));
  await assert.rejects(Promise.resolve(call(handlers.get("/a")!)), /no module/);
});
