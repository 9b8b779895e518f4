/**
 * `api({ openapi })` and `api().openapi()` inside an application: the served document, its path
 * below the prefix, the configuration checks, the Swagger UI assets, and `generate` / `openapi`
 * on an entry file with two documented `api()` plugins.
 */

import assert from "node:assert/strict";
import { api, application, endpoint, http, Int, module, schema } from "@fw/application";
import { generate, main, openapi } from "@fw/application/cli";
import { createLogger, MemorySink } from "@fw/runtime";

const silent = createLogger({ level: "silent" });
const FIXTURE = new URL("./fixtures/openapi_app/main.ts", import.meta.url);

function usersApi(options: Parameters<typeof api>[0]) {
  return api({ autoScan: false, ...options })
    .route("GET", "/users/:id", endpoint().params({ id: Int }).handle((ctx) => ctx.params))
    .throws(503, "Maintenance");
}

Deno.test("api().openapi() returns the document after warmup, with the global throws", async () => {
  const users = usersApi({});
  assert.throws(() => users.openapi({ info: { title: "T", version: "1" } }), {
    message: "api().openapi() needs the routes: call it after app.warmup() or start()",
  });
  await application({ logger: silent }).use(module().path("/v2").use(users)).warmup();
  const doc = users.openapi({ info: { title: "Users", version: "2.0.0" } });
  assert.deepEqual(doc.info, { title: "Users", version: "2.0.0" });
  assert.deepEqual(Object.keys(doc.paths), ["/v2/users/{id}"]);
  const op = doc.paths["/v2/users/{id}"].get;
  assert.deepEqual(Object.keys(op.responses), ["400", "406", "500", "503", "2XX"]);
  assert.equal(op.responses["503"].description, "Maintenance");
  assert.equal(op.responses["406"].description.startsWith("Not Acceptable"), true);
  assert.deepEqual(op.tags, ["users"]);
  assert.notEqual(
    users.openapi({ info: { title: "A", version: "1" } }),
    users.openapi({ info: { title: "A", version: "1" } }),
  );
  assert.throws(
    () => users.openapi(),
    /pass \{ info: \{ title, version \} \} or configure api\(\{ openapi \}\)/,
  );
  assert.throws(
    () => users.openapi({ info: { title: "T", version: 1 } } as never),
    {
      name: "TypeError",
      message: 'api().openapi(): "info.version" must be a non-empty string, got 1',
    },
  );
  assert.equal(
    (await application({ logger: silent }).use(users).request("/openapi.json")).status,
    404,
  );
});

Deno.test("api({ openapi }) serves the document below the prefix; the spec's version is info.version", async () => {
  const users = usersApi({
    openapi: {
      title: "Users",
      version: "3.1.4",
      description: "People",
      servers: [{ url: "https://api.example.com" }],
    },
  });
  const app = application({ logger: silent }).use(module().path("/api").use(users));
  const res = await app.request("/api/openapi.json");
  assert.equal(res.status, 200);
  assert.equal(res.headers.get("content-type"), "application/json");
  const text = await res.text();
  assert.equal(text, JSON.stringify(users.openapi(), null, 2) + "\n");
  const doc = JSON.parse(text);
  assert.deepEqual(doc.info, { title: "Users", version: "3.1.4", description: "People" });
  assert.deepEqual(doc.servers, [{ url: "https://api.example.com" }]);
  assert.deepEqual(
    Object.keys(doc.paths),
    ["/api/users/{id}"],
    "the document's own route is left out",
  );
  assert.equal((await app.request("/openapi.json")).status, 404);

  const custom = application({ logger: silent }).use(
    usersApi({ openapi: { info: { title: "U", version: "1" }, path: "/spec.json" } }),
  );
  assert.equal((await custom.request("/spec.json")).status, 200);
  assert.equal((await custom.request("/docs")).status, 404, "no page unless docs is set");
  const hidden = application({ logger: silent }).use(
    usersApi({ openapi: { title: "U", version: "1", path: false } }),
  );
  assert.equal((await hidden.request("/openapi.json")).status, 404);
});

Deno.test("api({ openapi }) rejects configuration mistakes at once, naming the option", () => {
  const cases: [unknown, RegExp][] = [
    [{ version: "1" }, /api\(\): "openapi.title" must be a non-empty string, got undefined/],
    [{ title: "T" }, /api\(\): "openapi.version" must be a non-empty string/],
    [{ info: { title: "T" } }, /"openapi.info.version" must be a non-empty string/],
    [
      { title: "T", version: "1", info: { title: "T", version: "1" } },
      /give either "openapi.info" or/,
    ],
    [
      { title: "T", version: "1", servers: [{}] },
      /"openapi.servers\[0\].url" must be a non-empty string/,
    ],
    [
      { title: "T", version: "1", path: "spec.json" },
      /"openapi.path" must be a path starting with "\/"/,
    ],
    [
      { title: "T", version: "1", docs: "docs" },
      /"openapi.docs" must be a path starting with "\/"/,
    ],
    [
      { title: "T", version: "1", docs: "/docs", path: false },
      /"openapi.docs" needs the JSON document/,
    ],
    [
      { title: "T", version: "1", docs: "/x", path: "/x" },
      /"openapi.docs" and "openapi.path" must differ/,
    ],
    ["yes", /api\(\): "openapi" must be an object/],
  ];
  for (const [openapi, message] of cases) {
    assert.throws(
      () => api({ openapi } as never),
      { name: "TypeError", message },
      JSON.stringify(openapi),
    );
  }
});

Deno.test("api({ openapi }) fails start-up when a route cannot be documented", async () => {
  const bad = api({ autoScan: false, openapi: { title: "T", version: "1" } })
    .route("GET", "/a", endpoint().returns(schema("Thing", { v: Int })).handle(() => ({ v: 1 })))
    .route(
      "GET",
      "/b",
      endpoint().returns(schema("Thing", { v: String })).handle(() => ({ v: "x" })),
    );
  await assert.rejects(
    application({ logger: silent }).use(bad).warmup(),
    /Cannot document route "GET \/b" \(api\(\)\.route\(\)\): Schema name "Thing" is used by two different schemas/,
  );
});

Deno.test("api({ openapi }) in production builds the document on its first request: the same document, and a route that cannot be documented answers 500 there", async () => {
  const good = () =>
    api({ autoScan: false, openapi: { title: "T", version: "1", docs: "/docs" } })
      .route("GET", "/users/:id", endpoint().params({ id: Int }).handle((ctx) => ctx.params));
  const dev = application({ logger: silent, production: false }).use(good());
  const prod = application({ logger: silent, production: true }).use(good());
  await prod.warmup(); // the routes are there before the code that serves them is loaded
  const methodNotAllowed = await prod.request("/openapi.json", { method: "POST" });
  assert.equal(methodNotAllowed.status, 405);
  assert.equal(methodNotAllowed.headers.get("allow"), "GET, HEAD, OPTIONS");
  await methodNotAllowed.body?.cancel();
  const devDoc = await (await dev.request("/openapi.json")).json();
  const res = await prod.request("/openapi.json");
  assert.equal(res.status, 200);
  assert.deepEqual(await res.json(), devDoc);
  const page = await prod.request("/docs");
  assert.equal(page.status, 200);
  assert.match(await page.text(), /<title>T: API documentation<\/title>/);
  for (const path of ["/openapi.json", "/docs", "/docs/init.js", "/docs/favicon.svg"]) {
    for (const method of ["GET", "HEAD"]) {
      const [a, b] = await Promise.all([dev, prod].map((app) => app.request(path, { method })));
      assert.equal(b.status, a.status, `${method} ${path}`);
      assert.deepEqual([...b.headers], [...a.headers], `${method} ${path}`);
      assert.equal(await b.text(), await a.text(), `${method} ${path}`);
    }
  }

  const sink = new MemorySink();
  const bad = application({ logger: createLogger({ level: "error", sink }), production: true })
    .use(
      api({ autoScan: false, openapi: { title: "T", version: "1" } })
        .route(
          "GET",
          "/a",
          endpoint().returns(schema("Thing", { v: Int })).handle(() => ({ v: 1 })),
        )
        .route(
          "GET",
          "/b",
          endpoint().returns(schema("Thing", { v: String })).handle(() => ({ v: "x" })),
        ),
    );
  await bad.warmup(); // production start-up does not build the document
  assert.equal((await bad.request("/a")).status, 200);
  const broken = await bad.request("/openapi.json");
  assert.equal(broken.status, 500);
  await broken.body?.cancel();
  const logged = sink.records.map((r) => [r.message, (r.fields?.error as Error)?.message]);
  assert.deepEqual(logged, [[
    "Unhandled error in GET /openapi.json",
    'Cannot document route "GET /b" (api().route()): Schema name "Thing" is used by two different schemas',
  ]]);
});

Deno.test("api({ openapi: { docs } }) serves Swagger UI from the npm package with a strict CSP", async () => {
  const app = application({ logger: silent }).use(
    module().path("/v1").use(
      usersApi({
        openapi: {
          title: "Users <&>",
          version: "1",
          docs: "/docs",
          servers: [{ url: "https://api.example.com/v1" }, { url: "/relative" }],
        },
      }),
    ),
  );
  const page = await app.request("/v1/docs");
  assert.equal(page.status, 200);
  assert.equal(page.headers.get("content-type"), "text/html; charset=utf-8");
  const csp = page.headers.get("content-security-policy") ?? "";
  assert.match(csp, /default-src 'none'/);
  assert.match(csp, /script-src 'self';/);
  assert.match(csp, /connect-src 'self' https:\/\/api\.example\.com;/);
  const html = await page.text();
  assert.match(html, /<title>Users &#60;&#38;&#62;: API documentation<\/title>/);
  assert.match(html, /<script src="\/v1\/docs\/swagger-ui-bundle\.js"><\/script>/);
  assert.doesNotMatch(html, /https?:\/\//, "no CDN");
  const init = await (await app.request("/v1/docs/init.js")).text();
  assert.match(init, /SwaggerUIBundle\(\{"url":"\/v1\/openapi\.json"/);

  const bundle = await app.request("/v1/docs/swagger-ui-bundle.js");
  assert.equal(bundle.headers.get("content-type"), "text/javascript; charset=utf-8");
  assert.ok((await bundle.arrayBuffer()).byteLength > 500_000);
  const etag = bundle.headers.get("etag")!;
  assert.match(etag, /^"[0-9a-f]{24}"$/);
  const again = await app.request("/v1/docs/swagger-ui-bundle.js", {
    headers: { "if-none-match": etag },
  });
  assert.equal(again.status, 304);
  assert.equal(await again.text(), "");
  const css = await app.request("/v1/docs/swagger-ui.css");
  assert.equal(css.headers.get("content-type"), "text/css; charset=utf-8");
  await css.body?.cancel();
  const icon = await app.request("/v1/docs/favicon.svg");
  assert.equal(icon.headers.get("content-type"), "image/svg+xml");
  await icon.body?.cancel();
});

Deno.test("api({ openapi }) routes conflict with an app route on the same path, naming both", async () => {
  const app = application({ logger: silent })
    .use(api({ autoScan: false, openapi: { title: "T", version: "1" } }))
    .use(api({ autoScan: false }).route("GET", "/openapi.json", endpoint(() => "mine")));
  await assert.rejects(app.warmup(), /api\(\)\.route\(\).*api\(\{ openapi \}\)/);
});

Deno.test("generate writes one document per api({ openapi }) and openapi() picks one", async () => {
  const gen = new URL("./fixtures/openapi_app/.gen/", import.meta.url);
  try {
    const { written } = await generate(FIXTURE.href);
    assert.deepEqual(written.map((f) => f.slice(f.lastIndexOf("/") + 1)), [
      "openapi.json",
      "openapi-v1.json",
    ]);
    const root = JSON.parse(await Deno.readTextFile(new URL("openapi.json", gen)));
    const v1 = await Deno.readTextFile(new URL("openapi-v1.json", gen));
    assert.deepEqual(Object.keys(root.paths), ["/ping"]);
    assert.deepEqual(JSON.parse(v1).info, { title: "V1", version: "1.2.3" });
    assert.deepEqual(Object.keys(JSON.parse(v1).paths), ["/v1/items/{id}"]);
    assert.ok(v1.endsWith("}\n"));

    await assert.rejects(
      openapi(FIXTURE.href),
      /Several api\(\{ openapi \}\) plugins .*pick one with --prefix \("", "\/v1"\)/,
    );
    assert.deepEqual(await openapi(FIXTURE.href, "/v1"), JSON.parse(v1));
    await assert.rejects(
      openapi(FIXTURE.href, "/v9"),
      /No api\(\{ openapi \}\) of ".*" has the prefix "\/v9"/,
    );
    const out = await Deno.makeTempFile({ suffix: ".json" });
    assert.equal(await main(["openapi", FIXTURE.pathname, "--prefix", "/v1", "--out", out]), 0);
    assert.equal(await Deno.readTextFile(out), v1);
    await Deno.remove(out);
  } finally {
    await Deno.remove(gen, { recursive: true }).catch(() => {});
  }
  const missing = await Deno.makeTempDir();
  assert.deepEqual(
    await generate(`${missing}/main.ts`),
    { written: [], changed: [] },
    "no entry file: nothing to import",
  );
  await Deno.remove(missing);
});

Deno.test("http() and the docs page: the document is served over a real socket", async () => {
  const app = application({ logger: silent })
    .use(http({ port: 0, hostname: "127.0.0.1", signals: false }))
    .use(usersApi({ openapi: { title: "T", version: "1", docs: "/docs" } }));
  await app.start();
  try {
    const res = await fetch(`${app.address!.url}/openapi.json`);
    assert.equal((await res.json()).openapi, "3.0.3");
    const page = await fetch(`${app.address!.url}/docs/`);
    assert.equal(page.status, 200);
    await page.body?.cancel();
  } finally {
    await app.stop();
  }
});

Deno.test("api({ openapi }) states the body limit of http() in the 413 responses", async () => {
  const orders = api({ autoScan: false, openapi: { title: "T", version: "1" } })
    .route("POST", "/orders", endpoint().body({ n: Int }).handle(() => undefined));
  const app = application({ logger: silent })
    .use(http({ port: 0, maxBodyBytes: 2048, signals: false }))
    .use(orders);
  await app.warmup();
  const doc = await (await app.request("/openapi.json")).json();
  assert.equal(
    doc.paths["/orders"].post.responses["413"].description,
    "Payload Too Large: the body exceeds 2048 bytes",
  );
  const big = await app.request("/orders", {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ n: 1, pad: "x".repeat(2048) }),
  });
  assert.equal(big.status, 413);
});
