import assert from "node:assert/strict";
import { ArrayOf, Int, schema } from "@fw/runtime";
import { endpoint } from "./endpoint.ts";
import { HttpResponse } from "./http_response.ts";
import { call, testApp } from "./testdata/app_context.ts";

const User = schema("User", { id: Int, name: String });

function warnings(sink: ReturnType<typeof testApp>["sink"]): string[] {
  return sink.records.filter((r) => r.level === "warn").map((r) => r.message);
}

Deno.test("response validation logs a WARN line and leaves the response unchanged", async () => {
  const { app, sink } = testApp();
  const def = endpoint().returns(User).handle(() => ({ id: "7", extra: true }) as never);
  const res = await call(def, "/users/7", { app, route: "/users/:id" });
  assert.equal(res.status, 200);
  assert.deepEqual(await res.json(), { id: "7", extra: true });
  assert.deepEqual(warnings(sink), [
    "[response-validation] /users/7 — response.id must be an integer; response.name is required",
  ]);
});

Deno.test("response validation stays silent for a valid response", async () => {
  const { app, sink } = testApp();
  const def = endpoint().returns(ArrayOf(User)).handle(() => [{ id: 1, name: "Ada" }]);
  await (await call(def, "/users", { app })).json();
  assert.deepEqual(warnings(sink), []);
});

Deno.test("response validation is off in production", async () => {
  const { app, sink } = testApp({ production: true });
  const def = endpoint().returns(User).handle(() => ({ id: "x" }) as never);
  const res = await call(def, "/users/7", { app });
  assert.deepEqual(await res.json(), { id: "x" });
  assert.deepEqual(warnings(sink), []);
});

Deno.test("response validation skips HttpResponse, undefined, null and non-JSON strings", async () => {
  const { app, sink } = testApp();
  const results = [new HttpResponse("{}"), undefined, null, "plain text"];
  for (const result of results) {
    await (await call(endpoint().returns(User).handle(() => result), "/u", { app })).text();
  }
  assert.deepEqual(warnings(sink), []);
});

Deno.test("response validation checks strings that hold JSON", async () => {
  const { app, sink } = testApp();
  const res = await call(endpoint().returns(User).handle(() => '{"id":1}'), "/u", { app });
  assert.equal(await res.text(), '{"id":1}');
  assert.deepEqual(warnings(sink), ["[response-validation] /u — response.name is required"]);
});

Deno.test("response validation uses the schema declared for the response status", async () => {
  const { app, sink } = testApp();
  const def = endpoint()
    .returns(User)
    .response(202, "Queued", { ticket: String })
    .handle((ctx) => {
      ctx.statusCode = 202;
      return { ticket: 5 } as never;
    });
  assert.equal((await call(def, "/u", { app })).status, 202);
  assert.deepEqual(warnings(sink), ["[response-validation] /u — response.ticket must be a string"]);
});

Deno.test("response validation ignores statuses without a declared schema", async () => {
  const { app, sink } = testApp();
  const def = endpoint().returns(User).handle((
    ctx,
  ) => (ctx.statusCode = 299, { anything: 1 } as never));
  await (await call(def, "/u", { app })).text();
  assert.deepEqual(warnings(sink), []);
});
