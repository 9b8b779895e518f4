import assert from "node:assert/strict";
import { RequestContext } from "./request_context.ts";
import { TEST_INFO, testApp } from "./testdata/app_context.ts";

function ctx(url: string, headers: Record<string, string> = {}, trustProxy = false) {
  const { app } = testApp({ http: { trustProxy } });
  const req = new Request(url, { headers });
  return new RequestContext(req, { id: "7" }, TEST_INFO, { route: "/users/:id", app, status: 200 });
}

Deno.test("RequestContext exposes url, req, headers, route, params, statusCode and server", () => {
  const c = ctx("http://api.test:8080/users/7?x=1", { "x-a": "b" });
  assert.equal(c.url, "http://api.test:8080/users/7?x=1");
  assert.equal(c.req.method, "GET");
  assert.equal(c.headers.get("x-a"), "b");
  assert.equal(c.route, "/users/:id");
  assert.deepEqual(c.params, { id: "7" });
  assert.equal(c.statusCode, 200);
  c.statusCode = 201;
  assert.equal(c.statusCode, 201);
  assert.equal(c.server, TEST_INFO.server);
});

Deno.test("RequestContext.path() and query() slice the raw URL", () => {
  const c = ctx("http://api.test/files/a%20b/c?q=1&r=%2F");
  assert.equal(c.path(), "/files/a%20b/c");
  assert.equal(c.query(), "?q=1&r=%2F");
  const bare = ctx("http://api.test/");
  assert.equal(bare.path(), "/");
  assert.equal(bare.query(), "");
  assert.equal(ctx("http://api.test/x?").query(), "");
  const hashed = ctx("http://api.test/x?a=1#frag");
  assert.equal(hashed.query(), "?a=1");
});

Deno.test("RequestContext.host() and domain() handle ports and IPv6", () => {
  const c = ctx("http://api.test:8080/");
  assert.equal(c.host(), "api.test:8080");
  assert.equal(c.domain(), "api.test");
  const plain = ctx("http://api.test/");
  assert.equal(plain.host(), "api.test");
  assert.equal(plain.domain(), "api.test");
  const v6 = ctx("http://[::1]:8000/");
  assert.equal(v6.host(), "[::1]:8000");
  assert.equal(v6.domain(), "[::1]");
});

Deno.test("RequestContext.secured() is true for https", () => {
  assert.equal(ctx("https://api.test/").secured(), true);
  assert.equal(ctx("http://api.test/").secured(), false);
});

Deno.test("RequestContext trusts X-Forwarded-Proto and X-Forwarded-Host only with trustProxy", () => {
  const headers = { "x-forwarded-proto": "https, http", "x-forwarded-host": "public.example:443" };
  const untrusted = ctx("http://10.0.0.1:8000/", headers);
  assert.equal(untrusted.secured(), false);
  assert.equal(untrusted.host(), "10.0.0.1:8000");
  const trusted = ctx("http://10.0.0.1:8000/", headers, true);
  assert.equal(trusted.secured(), true);
  assert.equal(trusted.host(), "public.example:443");
  assert.equal(trusted.domain(), "public.example");
});

Deno.test("RequestContext.queryParams() without a schema keeps the first value of each key", () => {
  const q = ctx("http://api.test/?a=1&b=x%20y&a=2&__proto__=p").queryParams();
  assert.equal(q.a, "1");
  assert.equal(q.b, "x y");
  assert.equal(q["__proto__"], "p");
  assert.equal(Object.getPrototypeOf(q), null);
});

Deno.test("RequestContext.body() reads JSON once and returns the same promise", async () => {
  const { app } = testApp();
  const req = new Request("http://api.test/", {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: '{"a":1}',
  });
  const c = new RequestContext(req, {}, TEST_INFO, { route: "/", app, status: 200 });
  const first = c.body();
  assert.equal(c.body(), first);
  assert.deepEqual(await first, { a: 1 });
});
