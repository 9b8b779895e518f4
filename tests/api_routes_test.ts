import assert from "node:assert/strict";
import { api, application, endpoint, http, Int, module } from "@fw/application";
import { createLogger, type LoaderRoute, MemorySink, type ModuleMap } from "@fw/runtime";
import { generate } from "@fw/application/cli";

const EXAMPLE = new URL("../examples/app/src/main.ts", import.meta.url);
const fixture = (name: string) => new URL(`./fixtures/${name}/main.ts`, import.meta.url);

function exampleApp(prefix?: string) {
  return application({ root: EXAMPLE, logger: createLogger({ level: "silent" }) }).use(
    api({ prefix }),
  );
}

Deno.test("api() serves every route file convention of spec 4.1", async () => {
  const app = exampleApp();
  const get = async (path: string, init?: RequestInit) => {
    const res = await app.request(path, init);
    return { status: res.status, body: await res.text() };
  };
  assert.deepEqual(await get("/health"), { status: 200, body: "ok" }); // get.ts
  assert.equal((await get("/users")).status, 200); // users/get.ts
  assert.equal(
    (await get("/users", {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ name: "Lin", email: "lin@example.com", tags: [] }),
    })).status,
    201,
  ); // users/post.ts
  assert.equal(JSON.parse((await get("/users/1")).body).name, "Ada"); // [id]/get.ts
  const put = await get("/users/1", {
    method: "PUT",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ name: "Ada L", email: "ada@example.com", tags: [] }),
  });
  assert.equal(JSON.parse(put.body).name, "Ada L"); // [id]/route.ts PUT
  assert.equal((await get("/users/1", { method: "DELETE" })).status, 204); // [id]/route.ts DELETE
  assert.equal((await get("/users/1")).status, 404);
  assert.equal((await get("/search/users?q=gra")).status, 200); // search/users.get.ts
  assert.deepEqual(await get("/files/docs/a%20b/readme.md"), {
    status: 200,
    body: "file: docs/a b/readme.md",
  }); // [...path]
  assert.equal((await get("/redirect")).status, 302); // redirect.get.ts
});

Deno.test("api() answers 404, 405 with Allow, HEAD for GET routes and OPTIONS", async () => {
  const app = exampleApp();
  const missing = await app.request("/missing");
  assert.equal(missing.status, 404);
  assert.deepEqual(await missing.json(), {
    statusCode: 404,
    message: 'No route matches "GET /missing"',
    error: "Not Found",
  });
  const wrong = await app.request("/health", { method: "PATCH" });
  assert.equal(wrong.status, 405);
  assert.equal(wrong.headers.get("allow"), "GET, HEAD, OPTIONS");
  assert.equal((await wrong.json()).error, "Method Not Allowed");
  const head = await app.request("/users/2", { method: "HEAD" });
  assert.equal(head.status, 200);
  assert.equal(head.headers.get("content-type"), "application/json");
  assert.equal(await head.text(), "");
  const options = await app.request("/users/2", { method: "OPTIONS" });
  assert.equal(options.status, 204);
  assert.equal(options.headers.get("allow"), "DELETE, GET, HEAD, OPTIONS, PUT");
});

Deno.test("api() rejects malformed percent-encoding and traversal in catch-all params", async () => {
  const app = exampleApp();
  const bad = await app.request("/users/%E0%A4%A");
  assert.equal(bad.status, 400);
  assert.match((await bad.json()).message, /Malformed percent-encoding in path parameter "id"/);
  const traversal = await app.request("/files/a/..%2f..%2fetc%2fpasswd");
  assert.equal(traversal.status, 400);
  assert.match((await traversal.json()).message, /must not contain "\." or "\.\." segments/);
  const nul = await app.request("/files/a%00b");
  assert.equal(nul.status, 400);
});

Deno.test("api() prepends its prefix, or the module path when it has none", async () => {
  assert.equal((await exampleApp("/v2").request("/v2/health")).status, 200);
  assert.equal((await exampleApp("/v2").request("/health")).status, 404);
  const silent = createLogger({ level: "silent" });
  const moduled = application({ root: EXAMPLE, logger: silent }).use(
    module().path("/v1").use(api()),
  );
  assert.equal(await (await moduled.request("/v1/health")).text(), "ok");
  const explicit = application({ root: EXAMPLE, logger: silent })
    .use(module().path("/v1").use(api({ prefix: "/own" })));
  assert.equal((await explicit.request("/own/health")).status, 200);
  assert.equal((await explicit.request("/v1/health")).status, 404);
});

Deno.test("api({ autoScan: false }).route() registers explicit routes", async () => {
  const app = application().use(
    api({ autoScan: false }).route(
      "get",
      "/sum/:a/:b",
      endpoint().params({ a: Int, b: Int }).handle((ctx) => ({ sum: ctx.params.a + ctx.params.b })),
    ),
  );
  assert.deepEqual(await (await app.request("/sum/2/40")).json(), { sum: 42 });
  assert.throws(() => api().route("FETCH", "/x", endpoint(() => "x")), /unknown method "FETCH"/);
  assert.throws(() => api().route("GET", "/x", (() => "x") as never), /made with endpoint\(\)/);
});

Deno.test("api() start-up errors name both conflicting files", async () => {
  const silent = createLogger({ level: "silent" });
  await assert.rejects(
    application({ root: fixture("conflict_app"), logger: silent }).use(api()).warmup(),
    /Cannot register route "GET \/users": already registered by users.get.ts \(also declared by users\/get.ts\)/,
  );
  await assert.rejects(
    application({ root: fixture("ambiguous_app"), logger: silent }).use(api()).warmup(),
    /Ambiguous routes: ":id" \(items\/\[id\]\/get.ts\) and ":slug" \(items\/\[slug\]\/delete.ts\)/,
  );
  await assert.rejects(
    application({ root: fixture("bad_export_app"), logger: silent }).use(api()).warmup(),
    /Route file "health\/get.ts" must have a default export made with endpoint\(\)/,
  );
  await assert.rejects(
    application({ root: fixture("no_such_app"), logger: silent }).use(api()).warmup(),
    /route folder ".*no_such_app\/api" does not exist/,
  );
  assert.throws(() => api({ prefix: "v1" }), /"prefix" must start with "\/"/);
});

Deno.test("generate writes a deterministic loader whatever the file creation order", async () => {
  const make = async (order: string[]) => {
    const dir = await Deno.makeTempDir();
    for (const f of order) {
      await Deno.mkdir(`${dir}/api/${f.slice(0, f.lastIndexOf("/"))}`, { recursive: true });
      await Deno.writeTextFile(`${dir}/api/${f}`, "export default 1;\n");
    }
    await Deno.writeTextFile(`${dir}/api/users/_helper.ts`, "export const x = 1;\n");
    await generate(`${dir}/main.ts`);
    await generate(`${dir}/main.ts`);
    const text = await Deno.readTextFile(`${dir}/.gen/api.gen.ts`);
    await Deno.remove(dir, { recursive: true });
    return text;
  };
  const files = [
    "users/get.ts",
    "users/[id]/route.ts",
    "health/get.ts",
    "a/b.post.ts",
    "z/chat.ws.ts",
  ];
  const one = await make(files);
  const two = await make([...files].reverse());
  assert.equal(one, two);
  assert.ok(!one.includes("_helper"));
  assert.deepEqual(
    [...one.matchAll(/^ {4}"([^"]+\.ts)"/gm)].map((m) => m[1]),
    ["a/b.post.ts", "health/get.ts", "users/[id]/route.ts", "users/get.ts", "z/chat.ws.ts"],
  );
});

Deno.test("generate writes the route table of the file names, and none when the names conflict", async () => {
  const loaderOf = async (files: string[]) => {
    const dir = await Deno.makeTempDir();
    try {
      for (const f of files) {
        await Deno.mkdir(`${dir}/api/${f.slice(0, f.lastIndexOf("/") + 1)}`, { recursive: true });
        await Deno.writeTextFile(`${dir}/api/${f}`, "export default 1;\n");
      }
      await generate(`${dir}/main.ts`);
      const url = new URL(`file://${dir}/.gen/api.gen.ts`).href;
      return (await import(url)).default;
    } finally {
      await Deno.remove(dir, { recursive: true });
    }
  };
  const loader = await loaderOf([
    "users/get.ts",
    "users/[id]/route.ts",
    "files/[...path]/get.ts",
    "a/b.post.ts",
    "z/chat.ws.ts",
  ]);
  assert.deepEqual(loader.routes, [
    { file: "a/b.post.ts", method: "POST", path: "/a/b" },
    { file: "files/[...path]/get.ts", method: "GET", path: "/files/*path" },
    { file: "users/[id]/route.ts", path: "/users/:id" },
    { file: "users/get.ts", method: "GET", path: "/users" },
    { file: "z/chat.ws.ts", method: "GET", path: "/z/chat", stream: true },
  ]);
  // start-up discovers these routes and reports the conflict, naming both files
  assert.equal((await loaderOf(["users/get.ts", "users.get.ts"])).routes, undefined);
  assert.equal((await loaderOf(["a/[id]/get.ts", "a/[slug]/put.ts"])).routes, undefined);
});

Deno.test("api() takes the routes of a loader's route table without reading the file names", async () => {
  const silent = createLogger({ level: "silent" });
  const modules = {
    // not a route file name: only the table makes it one
    "anything.ts": { default: endpoint(() => "from the table") },
    "items/route.ts": {
      PUT: endpoint().params({ id: Int }).handle((ctx) => ({ put: ctx.params.id })),
      GET: endpoint().params({ id: Int }).handle((ctx) => ({ got: ctx.params.id })),
      helper: 1,
    },
  };
  const routes = [
    { file: "anything.ts", method: "GET", path: "/x" },
    { file: "items/route.ts", path: "/items/:id" },
  ];
  const plugin = api({ manifest: { folder: "api", modules, routes }, prefix: "/v1" });
  const app = application({ logger: silent }).use(plugin);
  const res = await app.request("/v1/x");
  assert.equal(await res.text(), "from the table");
  assert.deepEqual(await (await app.request("/v1/items/7", { method: "PUT" })).json(), { put: 7 });
  assert.deepEqual(await (await app.request("/v1/items/8")).json(), { got: 8 });
  assert.equal((await app.request("/v1/items/x")).status, 400);
  assert.deepEqual(plugin.routes.map((r) => `${r.method} ${r.path} ${r.source}`), [
    "GET /v1/items/:id api/items/route.ts",
    "PUT /v1/items/:id api/items/route.ts",
    "GET /v1/x api/anything.ts",
  ]);
  // without the table, "anything.ts" is not a route file
  const scanned = application({ logger: silent }).use(
    api({ manifest: { folder: "api", modules } }),
  );
  assert.equal((await scanned.request("/x")).status, 404);
});

Deno.test("a route table reports bad exports as route discovery does, and gives way to it when edited by hand", async () => {
  const silent = createLogger({ level: "silent" });
  const ok = endpoint(() => "ok");
  const warm = (modules: ModuleMap, routes: LoaderRoute[]) =>
    application({ logger: silent }).use(api({ manifest: { folder: "api", modules, routes } }))
      .warmup();
  // a table edited by hand (a file the loader does not import): the files are discovered
  const app = application({ logger: silent }).use(api({
    manifest: {
      folder: "api",
      modules: { "health/get.ts": { default: ok } },
      routes: [{ file: "other/get.ts", method: "GET", path: "/other" }],
    },
  }));
  assert.equal(await (await app.request("/health")).text(), "ok");
  assert.equal((await app.request("/other")).status, 404);
  // the messages route discovery gives (routesOfFiles() serves both)
  await assert.rejects(
    warm({ "health/get.ts": { default: 1 } }, [{
      file: "health/get.ts",
      method: "GET",
      path: "/health",
    }]),
    /Route file "health\/get.ts" must have a default export made with endpoint\(\)/,
  );
  await assert.rejects(
    warm({ "users/route.ts": { helper: ok } }, [{ file: "users/route.ts", path: "/users" }]),
    /Route file "users\/route.ts" exports no method/,
  );
  await assert.rejects(
    warm({ "users/get.ts": { default: ok }, "users/route.ts": { GET: ok } }, [
      { file: "users/get.ts", method: "GET", path: "/users" },
      { file: "users/route.ts", path: "/users" },
    ]),
    /Cannot register route "GET \/users": already registered by users\/get.ts \(also declared by users\/route.ts\)/,
  );
  await assert.rejects(
    warm({ "chat.ws.ts": { default: ok } }, [
      { file: "chat.ws.ts", method: "GET", path: "/chat", stream: true },
    ]),
    /Route file "chat.ws.ts" must export a stream endpoint/,
  );
});

Deno.test("the example's committed .gen/api.gen.ts is up to date and used at start-up", async () => {
  const path = new URL("../examples/app/src/.gen/api.gen.ts", import.meta.url);
  const before = await Deno.readTextFile(path);
  await generate(EXAMPLE.href);
  assert.equal(await Deno.readTextFile(path), before, "run `deno task generate` and commit .gen/");
  const sink = new MemorySink();
  const app = application({ root: EXAMPLE, logger: createLogger({ sink }) }).use(api());
  await app.warmup();
  assert.deepEqual(sink.lines().filter((l) => l.includes("out of date")), []);
});

Deno.test("http() serves over a real socket and stop() drains an in-flight request", async () => {
  let release!: () => void;
  const gate = new Promise<void>((r) => release = r);
  let entered!: () => void;
  const inside = new Promise<void>((r) => entered = r);
  const app = application({ root: EXAMPLE, logger: createLogger({ level: "silent" }) })
    .use(http({ port: 0, hostname: "127.0.0.1", signals: false }))
    .use(api())
    .use(
      api({ autoScan: false, prefix: "/slow" }).route(
        "GET",
        "/",
        endpoint(async () => {
          entered();
          await gate;
          return "finished";
        }),
      ),
    );
  await app.start();
  const base = app.address!.url;
  assert.match(base, /^http:\/\/127\.0\.0\.1:\d+$/);
  const health = await fetch(`${base}/health`);
  assert.equal(await health.text(), "ok");
  const users = await fetch(`${base}/users?limit=1`, { headers: { accept: "application/yaml" } });
  assert.equal(users.headers.get("content-type"), "application/yaml; charset=utf-8");
  assert.match(await users.text(), /name: Ada/);
  const pending = fetch(`${base}/slow`);
  await inside;
  const stopping = app.stop();
  release();
  const res = await pending;
  assert.equal(await res.text(), "finished");
  await stopping;
  assert.equal(app.address, undefined);
});

Deno.test("http() rejects invalid options at start-up, naming the option", async () => {
  await assert.rejects(
    application().use(http({ port: 70000 })).start(),
    /http\(\): "port" must be an integer in 0\.\.65535/,
  );
  await assert.rejects(
    application().use(http({ maxBodyBytes: -1 })).start(),
    /"maxBodyBytes" must be a non-negative integer/,
  );
  assert.throws(() => application().use(http()).use(http()), /Plugin "http" is used twice/);
});

Deno.test("each request carries a trace id in the context, from traceparent when valid", async () => {
  const { useContext } = await import("@fw/runtime");
  const seen: string[] = [];
  const app = application().use(
    api({ autoScan: false })
      .route("GET", "/sync", endpoint(() => useContext<{ traceId: string }>().traceId))
      .route(
        "GET",
        "/async",
        endpoint(async () => {
          await new Promise((r) => setTimeout(r, 1));
          seen.push(useContext<{ traceId: string }>().traceId);
          return "ok";
        }),
      ),
  );
  const parent = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01";
  assert.equal(
    await (await app.request("/sync", { headers: { traceparent: parent } })).text(),
    "4bf92f3577b34da6a3ce929d0e0e4736",
  );
  const fresh = await (await app.request("/sync", { headers: { traceparent: "garbage" } })).text();
  assert.match(fresh, /^[0-9a-f]{32}$/);
  assert.notEqual(fresh, "4bf92f3577b34da6a3ce929d0e0e4736");
  await app.request("/async", { headers: { traceparent: parent } });
  assert.deepEqual(seen, ["4bf92f3577b34da6a3ce929d0e0e4736"]);
});
