import assert from "node:assert/strict";
import {
  badRequest,
  forbidden,
  HttpResponse,
  json,
  notFound,
  type RedirectStatus,
  unauthorized,
} from "./http_response.ts";

Deno.test("HttpResponse defaults to status 200 with no body", async () => {
  const res = new HttpResponse().toResponse();
  assert.equal(res.status, 200);
  assert.equal(await res.text(), "");
});

Deno.test("HttpResponse.setHeader() is chainable and replaces values", () => {
  const res = new HttpResponse("x").setHeader("x-a", "1").setHeader("X-A", "2").setHeader(
    "x-b",
    "3",
  );
  assert.equal(res.headers.get("x-a"), "2");
  assert.equal(res.toResponse().headers.get("x-b"), "3");
});

Deno.test("HttpResponse.setHeader() rejects header injection", () => {
  assert.throws(() => new HttpResponse().setHeader("x-a", "1\r\nset-cookie: a=b"), TypeError);
});

Deno.test("HttpResponse rejects invalid statuses and bodies on null-body statuses", () => {
  assert.throws(() => new HttpResponse(null, { status: 99 }), {
    name: "RangeError",
    message: "Invalid status 99 in HttpResponse: expected an integer from 200 to 599",
  });
  assert.throws(() => new HttpResponse("x", { status: 204 }), {
    name: "TypeError",
    message: "Invalid HttpResponse: status 204 cannot have a body",
  });
  assert.equal(new HttpResponse(null, { status: 304 }).status, 304);
});

Deno.test("json() serialises data with its status and a JSON content type", async () => {
  const res = json([{ a: 1 }], { status: 201, headers: { "x-a": "1" } }).toResponse();
  assert.equal(res.status, 201);
  assert.equal(res.headers.get("content-type"), "application/json");
  assert.equal(res.headers.get("x-a"), "1");
  assert.equal(await res.text(), '[{"a":1}]');
});

Deno.test("json() keeps a content type given by the caller", () => {
  const res = json({}, { headers: { "content-type": "application/problem+json" } });
  assert.equal(res.headers.get("content-type"), "application/problem+json");
});

Deno.test("notFound(), unauthorized(), forbidden() and badRequest() use the error shape", async () => {
  const cases: [HttpResponse, number, string][] = [
    [notFound("No user"), 404, "Not Found"],
    [unauthorized("Log in"), 401, "Unauthorized"],
    [forbidden("Admins only"), 403, "Forbidden"],
    [badRequest("Bad sort"), 400, "Bad Request"],
  ];
  for (const [res, status, error] of cases) {
    assert.equal(res.status, status);
    const body = await res.toResponse().json();
    assert.equal(body.statusCode, status);
    assert.equal(body.error, error);
    assert.notEqual(body.message, error);
  }
  assert.deepEqual(await notFound().toResponse().json(), {
    statusCode: 404,
    message: "Not Found",
    error: "Not Found",
  });
});

Deno.test("HttpResponse.redirect() sets Location and defaults to 302", () => {
  const res = HttpResponse.redirect(new URL("https://example.com/a")).toResponse();
  assert.equal(res.status, 302);
  assert.equal(res.headers.get("location"), "https://example.com/a");
  for (const status of [301, 303, 307, 308] as const) {
    assert.equal(HttpResponse.redirect("/x", status).status, status);
  }
});

Deno.test("HttpResponse.redirect() rejects a status that is not a redirect", () => {
  assert.throws(() => HttpResponse.redirect("/x", 200 as RedirectStatus), {
    name: "RangeError",
    message: "Invalid redirect status 200: expected 301, 302, 303, 307 or 308",
  });
});
