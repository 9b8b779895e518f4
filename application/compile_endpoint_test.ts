import assert from "node:assert/strict";
import {
  BadRequestException,
  ConflictException,
  Container,
  ForbiddenException,
  HttpException,
  Int,
  NotFoundException,
  provider,
  Stream,
  UnauthorizedException,
  ValidationException,
} from "@fw/runtime";
import { compileEndpoint } from "./compile_endpoint.ts";
import { endpoint } from "./endpoint.ts";
import { HttpResponse, json } from "./http_response.ts";
import { call, testApp } from "./testdata/app_context.ts";

const get = (path: string, headers: Record<string, string> = {}) =>
  new Request(new URL(path, "http://localhost:8000"), { headers });

Deno.test("compileEndpoint() sends an object as JSON by default", async () => {
  const res = await call(endpoint(() => ({ id: 1, tags: ["a"] })), "/things/1");
  assert.equal(res.status, 200);
  assert.equal(res.headers.get("content-type"), "application/json");
  assert.deepEqual(await res.json(), { id: 1, tags: ["a"] });
});

Deno.test("compileEndpoint() sends an array as JSON", async () => {
  const res = await call(endpoint(() => [1, 2]), "/list");
  assert.deepEqual(await res.json(), [1, 2]);
});

Deno.test("compileEndpoint() sends a string as text/plain as-is", async () => {
  const res = await call(endpoint(() => "<b>hi</b>"), get("/", { accept: "application/xml" }));
  assert.equal(res.status, 200);
  assert.equal(res.headers.get("content-type"), "text/plain;charset=UTF-8");
  assert.equal(await res.text(), "<b>hi</b>");
});

Deno.test("compileEndpoint() sends an HttpResponse as given, ignoring ctx.statusCode", async () => {
  const def = endpoint((ctx) => {
    ctx.statusCode = 500;
    return new HttpResponse("made", { status: 201 }).setHeader("x-made", "yes");
  });
  const res = await call(def, get("/", { accept: "application/pdf" }));
  assert.equal(res.status, 201);
  assert.equal(res.headers.get("x-made"), "yes");
  assert.equal(await res.text(), "made");
});

Deno.test("compileEndpoint() sends a standard Response as given", async () => {
  const res = await call(endpoint(() => new Response("raw", { status: 202 })), "/");
  assert.equal(res.status, 202);
  assert.equal(await res.text(), "raw");
});

Deno.test("compileEndpoint() answers undefined with 204 No Content", async () => {
  const res = await call(endpoint(() => undefined), "/");
  assert.equal(res.status, 204);
  assert.equal(res.body, null);
});

Deno.test("compileEndpoint() answers undefined with the status the handler set", async () => {
  const res = await call(endpoint((ctx) => void (ctx.statusCode = 202)), "/");
  assert.equal(res.status, 202);
  assert.equal(await res.text(), "");
});

Deno.test("compileEndpoint() applies ctx.statusCode to objects and strings", async () => {
  const created = await call(endpoint((ctx) => (ctx.statusCode = 201, { id: 1 })), "/");
  assert.equal(created.status, 201);
  assert.deepEqual(await created.json(), { id: 1 });
  const text = await call(endpoint((ctx) => (ctx.statusCode = 418, "teapot")), "/");
  assert.equal(text.status, 418);
  assert.equal(await text.text(), "teapot");
});

Deno.test("compileEndpoint() starts ctx.statusCode at the .returns() status", async () => {
  const def = endpoint().returns(201, "Created", { id: Int }).handle(() => ({ id: 1 }));
  assert.equal((await call(def, "/")).status, 201);
});

Deno.test("compileEndpoint() sends an empty body when the status forbids one", async () => {
  const res = await call(endpoint((ctx) => (ctx.statusCode = 204, { ignored: true })), "/");
  assert.equal(res.status, 204);
  assert.equal(res.body, null);
});

Deno.test("compileEndpoint() awaits async handlers", async () => {
  const def = endpoint(async () => {
    await Promise.resolve();
    return { late: true };
  });
  assert.deepEqual(await (await call(def, "/")).json(), { late: true });
});

const negotiated: [string | undefined, string, (body: string) => void][] = [
  [undefined, "application/json", (b) => assert.deepEqual(JSON.parse(b), DATA)],
  [
    "application/json",
    "application/json",
    (b) => assert.equal(b, JSON.stringify(DATA)),
  ],
  ["*/*", "application/json", (b) => assert.equal(b, JSON.stringify(DATA))],
  [
    "text/plain",
    "text/plain;charset=UTF-8",
    (b) => assert.equal(b, "name: Ada & Bob\ntags:\n  - x\n"),
  ],
  [
    "application/yaml",
    "application/yaml; charset=utf-8",
    (b) => assert.match(b, /^name: Ada & Bob\n/),
  ],
  ["text/yaml", "text/yaml; charset=utf-8", (b) => assert.match(b, /^name: Ada & Bob\n/)],
  [
    "text/html",
    "text/html; charset=utf-8",
    (b) => {
      assert.match(b, /^<!DOCTYPE html>/);
      assert.ok(b.includes("&quot;name&quot;: &quot;Ada &amp; Bob&quot;"));
    },
  ],
  [
    "application/xml",
    "application/xml; charset=utf-8",
    (b) =>
      assert.equal(
        b,
        '<?xml version="1.0" encoding="UTF-8"?><root><name>Ada &amp; Bob</name><tags><item>x</item></tags></root>',
      ),
  ],
  ["text/xml", "application/xml; charset=utf-8", (b) => assert.match(b, /^<\?xml .*<root>/)],
];
const DATA = { name: "Ada & Bob", tags: ["x"] };

for (const [accept, type, check] of negotiated) {
  Deno.test(`compileEndpoint() negotiates Accept ${accept ?? "(absent)"} to ${type}`, async () => {
    const res = await call(endpoint(() => DATA), get("/", accept ? { accept } : {}));
    assert.equal(res.status, 200);
    assert.equal(res.headers.get("content-type"), type);
    check(await res.text());
  });
}

Deno.test("compileEndpoint() honours q-values when negotiating", async () => {
  const res = await call(
    endpoint(() => DATA),
    get("/", { accept: "application/json;q=0.2, text/yaml;q=0.8" }),
  );
  assert.equal(res.headers.get("content-type"), "text/yaml; charset=utf-8");
});

Deno.test("compileEndpoint() answers 406 in the error shape for an unsupported Accept", async () => {
  let ran = false;
  const def = endpoint(() => (ran = true, DATA));
  const res = await call(def, get("/", { accept: "application/pdf, image/*" }));
  assert.equal(res.status, 406);
  assert.equal(res.headers.get("content-type"), "application/json");
  const body = await res.json();
  assert.equal(body.statusCode, 406);
  assert.equal(body.error, "Not Acceptable");
  assert.match(body.message, /Accept "application\/pdf, image\/\*"/);
  assert.equal(ran, true);
});

Deno.test("compileEndpoint() answers 406 before the handler when .returns() declares an object", async () => {
  let ran = false;
  const def = endpoint().returns({ id: Int }).handle(() => (ran = true, { id: 1 }));
  const res = await call(def, get("/", { accept: "application/pdf" }));
  assert.equal(res.status, 406);
  assert.equal(ran, false);
});

Deno.test("compileEndpoint() maps thrown HttpExceptions to their status and error body", async () => {
  const cases: [Error, number, string][] = [
    [new NotFoundException('User "7" not found'), 404, "Not Found"],
    [new ConflictException("Email taken"), 409, "Conflict"],
    [new UnauthorizedException(), 401, "Unauthorized"],
    [new BadRequestException("Bad sort key"), 400, "Bad Request"],
    [new ForbiddenException("Admins only"), 403, "Forbidden"],
  ];
  for (const [error, status, phrase] of cases) {
    const { app, sink } = testApp();
    const res = await call(
      endpoint(() => {
        throw error;
      }),
      "/",
      { app },
    );
    assert.equal(res.status, status);
    assert.deepEqual(await res.json(), {
      statusCode: status,
      message: error.message,
      error: phrase,
    });
    assert.equal(sink.records.filter((r) => r.level === "error").length, 0);
  }
});

Deno.test("compileEndpoint() answers other throws with a generic 500 and logs the error", async () => {
  const { app, sink } = testApp();
  const secret = new Error("db password is hunter2");
  const res = await call(
    endpoint(async () => {
      await Promise.resolve();
      throw secret;
    }),
    "/boom",
    { app, route: "/boom" },
  );
  assert.equal(res.status, 500);
  const text = await res.text();
  assert.deepEqual(JSON.parse(text), {
    statusCode: 500,
    message: "Internal Server Error",
    error: "Internal Server Error",
  });
  assert.ok(!text.includes("hunter2"));
  const logged = sink.records.find((r) => r.level === "error");
  assert.equal(logged?.message, "Unhandled error in GET /boom");
  assert.equal(logged?.fields.error, secret);
});

Deno.test("compileEndpoint() answers 500 when a result cannot be serialised", async () => {
  const { app, sink } = testApp();
  const res = await call(endpoint(() => ({ big: 1n })), "/", { app });
  assert.equal(res.status, 500);
  assert.equal(sink.records.filter((r) => r.level === "error").length, 1);
});

Deno.test("compileEndpoint() rejects a stream endpoint on a method other than GET", () => {
  const def = endpoint().returns(Stream({ n: Int })).handle(() => {});
  assert.throws(
    () => compileEndpoint(def, { method: "POST", route: "/ticks", app: testApp().app }),
    { name: "TypeError", message: /"POST \/ticks": stream endpoints are GET routes/ },
  );
});

Deno.test("compileEndpoint() rejects a value that is not an endpoint", () => {
  assert.throws(
    () =>
      compileEndpoint({ kind: "nope" } as never, {
        method: "GET",
        route: "/x",
        app: testApp().app,
      }),
    {
      name: "TypeError",
      message: 'Cannot compile route "GET /x": expected an endpoint() definition',
    },
  );
});

Deno.test("compileEndpoint() resolves .inject() providers per request and disposes them after", async () => {
  const events: string[] = [];
  let next = 0;
  const Db = provider({ name: "Db", factory: () => ({ query: () => "rows" }) });
  const Tx = provider({
    name: "Tx",
    lifetime: "scoped",
    inject: { db: Db },
    factory: ({ db }) => {
      const id = ++next;
      events.push(`open ${id}`);
      return { id, rows: db.query() };
    },
    dispose: (tx) => void events.push(`close ${tx.id}`),
  });
  const def = endpoint().inject({ tx: Tx }).handle(({ tx }, ctx) => {
    events.push(`handle ${tx.id} ${ctx.path()}`);
    return { tx: tx.id, rows: tx.rows };
  });
  const { app } = testApp({ container: new Container() });
  const handler = compileEndpoint(def, { method: "GET", route: "/tx", app });
  const info = { server: { hostname: "localhost", port: 0, url: "http://localhost/" } };
  const first = await handler(get("/tx"), {}, info);
  const second = await handler(get("/tx"), {}, info);
  assert.deepEqual(await first.json(), { tx: 1, rows: "rows" });
  assert.deepEqual(await second.json(), { tx: 2, rows: "rows" });
  assert.deepEqual(events, [
    "open 1",
    "handle 1 /tx",
    "close 1",
    "open 2",
    "handle 2 /tx",
    "close 2",
  ]);
});

Deno.test("compileEndpoint() disposes the request scope when the handler throws", async () => {
  const events: string[] = [];
  const Res = provider({
    name: "Res",
    lifetime: "scoped",
    factory: () => "r",
    dispose: () => void events.push("disposed"),
  });
  const def = endpoint().inject({ res: Res }).handle(() => {
    throw new ConflictException("no");
  });
  const res = await call(def, "/");
  assert.equal(res.status, 409);
  assert.deepEqual(events, ["disposed"]);
});

Deno.test("compileEndpoint() does not resolve providers for an invalid request", async () => {
  let made = 0;
  const P = provider({ name: "P", lifetime: "scoped", factory: () => ++made });
  const def = endpoint().params({ id: Int }).inject({ p: P }).handle(({ p }) => ({ p }));
  const res = await call(def, "/x/abc", { params: { id: "abc" } });
  assert.equal(res.status, 400);
  assert.equal(made, 0);
});

Deno.test("compileEndpoint() sends json() with its status regardless of Accept", async () => {
  const res = await call(
    endpoint(() => json({ a: 1 }, { status: 201 })),
    get("/", { accept: "text/html" }),
  );
  assert.equal(res.status, 201);
  assert.equal(res.headers.get("content-type"), "application/json");
  assert.deepEqual(await res.json(), { a: 1 });
});

Deno.test("compileEndpoint() sends the headers of a thrown HttpException", async () => {
  const def = endpoint(() => {
    throw new HttpException(429, "Slow down", { headers: { "retry-after": "5" } });
  });
  const res = await call(def, "/");
  assert.equal(res.status, 429);
  assert.equal(res.headers.get("retry-after"), "5");
  assert.equal(res.headers.get("content-type"), "application/json");
  assert.deepEqual(await res.json(), {
    statusCode: 429,
    message: "Slow down",
    error: "Too Many Requests",
  });
});

Deno.test("compileEndpoint() sends a thrown ValidationException in the validation shape", async () => {
  const issue = { field: "body.email", message: "body.email is already taken" };
  const res = await call(
    endpoint(() => {
      throw new ValidationException([issue]);
    }),
    "/",
  );
  assert.equal(res.status, 400);
  assert.deepEqual(await res.json(), { message: issue.message, errors: [issue] });
});
