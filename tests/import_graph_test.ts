/**
 * Guards the import graph (issue 19): importing `@fw/application` or `@fw/events` loads no npm
 * package at start-up. Optional integrations (JOSE for `oauth()`, Redis, YAML, XML,
 * OpenTelemetry, Swagger UI) are loaded by dynamic imports on first use or live behind their own
 * exports. The static graph is read from `deno info --json`, following only static, non-type
 * imports, which is what Deno loads and evaluates before the entry module runs.
 */

import assert from "node:assert/strict";

interface Dependency {
  readonly code?: { readonly specifier: string };
  readonly isDynamic?: boolean;
}
interface InfoModule {
  readonly specifier: string;
  readonly dependencies?: readonly Dependency[];
}
interface Info {
  readonly roots: readonly string[];
  readonly modules: readonly InfoModule[];
  readonly redirects: Readonly<Record<string, string>>;
}

async function info(entry: string): Promise<Info> {
  const out = await new Deno.Command(Deno.execPath(), {
    args: ["info", "--json", new URL(entry, import.meta.url).pathname],
    stdout: "piped",
    stderr: "piped",
  }).output();
  if (!out.success) throw new Error(new TextDecoder().decode(out.stderr));
  return JSON.parse(new TextDecoder().decode(out.stdout));
}

/** The modules Deno loads before `entry` runs (static imports only), or all of them. */
async function graph(entry: string, dynamic = false): Promise<string[]> {
  const { roots, modules, redirects } = await info(entry);
  const byName = new Map(modules.map((m) => [m.specifier, m]));
  const seen = new Set<string>();
  const stack = [...roots];
  while (stack.length > 0) {
    const name = stack.pop()!;
    const specifier = redirects[name] ?? name;
    if (seen.has(specifier)) continue;
    seen.add(specifier);
    for (const dep of byName.get(specifier)?.dependencies ?? []) {
      if (dep.code === undefined || (dep.isDynamic && !dynamic)) continue;
      stack.push(dep.code.specifier);
    }
  }
  return [...seen].sort();
}

/** Runs `script` with `deno eval` in the repository and returns its output lines. */
async function evalLines(script: string): Promise<{ lines: string[]; stderr: string }> {
  const out = await new Deno.Command(Deno.execPath(), {
    args: ["eval", "--ext=ts", script],
    cwd: new URL("..", import.meta.url).pathname,
    stdout: "piped",
    stderr: "piped",
  }).output();
  const text = (b: Uint8Array) => new TextDecoder().decode(b);
  return { lines: text(out.stdout).trim().split("\n"), stderr: text(out.stderr) };
}

const OPTIONAL =
  /^npm:\/?(jose|redis|@redis\/|yaml|fast-xml-parser|@opentelemetry\/|swagger-ui-dist)/;

Deno.test("importing @fw/application loads no npm package (no JOSE, Redis, YAML, XML, OpenTelemetry) and no node: module", async () => {
  const loaded = await graph("../application/mod.ts");
  assert.ok(loaded.some((s) => s.endsWith("/application/application.ts")), "graph was read");
  assert.deepEqual(loaded.filter((s) => s.startsWith("npm:")), []);
  assert.deepEqual(loaded.filter((s) => OPTIONAL.test(s)), []);
  // The async context runs on Deno's own frames: node:async_hooks (about 15 ms of a cold start)
  // loads only on the AsyncLocalStorage fallback path.
  assert.deepEqual(loaded.filter((s) => s.startsWith("node:")), []);
  // They are still reachable, through dynamic imports on first use: the check above would see them.
  const all = await graph("../application/mod.ts", true);
  for (const name of ["yaml", "fast-xml-parser", "swagger-ui-dist"]) {
    assert.ok(all.some((s) => s.startsWith(`npm:/${name}@`)), `${name} is loaded dynamically`);
  }
  // JOSE and OpenTelemetry come with oauth() and telemetry() (their own exports), on set-up
  for (
    const [at, name] of [
      ["../application/policies/oauth.ts", "jose"],
      ["../application/telemetry/telemetry.ts", "@opentelemetry/api"],
    ]
  ) {
    assert.deepEqual((await graph(at)).filter((s) => s.startsWith("npm:")), [], at);
    const reach = await graph(at, true);
    assert.ok(reach.some((s) => s.startsWith(`npm:/${name}@`)), `${name} is loaded dynamically`);
  }
});

Deno.test("optional parts live behind their own exports or load on demand: @fw/application loads no OpenAPI generator, response validation, health routes, oauth(), telemetry(), rate-limit store, route loader or JSON Schema writer", async () => {
  const loaded = await graph("../application/mod.ts");
  assert.ok(loaded.some((s) => s.endsWith("/application/api.ts")), "graph was read");
  for (
    const name of [
      "/application/openapi/document.ts",
      "/application/openapi/_serve.ts",
      "/application/response_validation.ts",
      "/application/_health.ts",
      "/application/policies/oauth.ts",
      "/application/policies/rate_limit_store.ts",
      "/application/telemetry/telemetry.ts",
      "/runtime/loader.ts",
      "/runtime/json_schema.ts",
    ]
  ) {
    assert.ok(!loaded.some((s) => s.endsWith(name)), `${name} is not loaded`);
  }
  // what api() and http() load when they need it: the generator (api({ openapi }) in
  // production: on the first request for its document), response validation (outside
  // production), the loader to scan, the health routes (http({ health }))
  const all = await graph("../application/mod.ts", true);
  for (
    const name of [
      "/application/openapi/document.ts",
      "/application/response_validation.ts",
      "/runtime/loader.ts",
      "/application/_health.ts",
    ]
  ) {
    assert.ok(all.some((s) => s.endsWith(name)), `${name} is reachable`);
  }
  const config = JSON.parse(
    await Deno.readTextFile(new URL("../application/deno.json", import.meta.url)),
  );
  assert.equal(config.exports["./openapi"], "./openapi/document.ts");
  assert.equal(config.exports["./oauth"], "./policies/oauth.ts");
  assert.equal(config.exports["./telemetry"], "./telemetry/telemetry.ts");
  assert.equal(config.exports["./rate-limit"], "./policies/rate_limit_store.ts");
});

Deno.test("api().openapi() in production names the import that loads the generator; api({ openapi }) loads it with the first request for its document", async () => {
  const script = `
    import { api, application, endpoint } from "@fw/application";
    const info = { title: "T", version: "1" };
    const attempt = (f) => { try { f(); console.log("built"); } catch (e) { console.log(e.message); } };
    const plugin = api({ autoScan: false }).route("GET", "/hi", endpoint().handle(() => "hi"));
    await application({ production: true }).use(plugin).warmup();
    attempt(() => plugin.openapi({ info }));
    const served = api({ autoScan: false, openapi: { ...info, docs: "/docs" } })
      .route("GET", "/there", endpoint().handle(() => "there"));
    const app = application({ production: true }).use(served);
    await app.warmup();
    attempt(() => served.openapi());
    const res = await app.request("/openapi.json");
    console.log(res.status, Object.keys((await res.json()).paths).join());
    console.log(Object.keys(served.openapi().paths).join(), Object.keys(plugin.openapi({ info }).paths).join());
    await import("@fw/application/openapi");
    const dev = api({ autoScan: false }).route("GET", "/dev", endpoint().handle(() => "hi"));
    await application({ production: false }).use(dev).warmup();
    console.log(Object.keys(dev.openapi({ info }).paths).join());
  `;
  const { lines, stderr } = await evalLines(script);
  const missing = (label: string) =>
    `${label}: the OpenAPI generator is not loaded; in production it loads with the first request for the document of api({ openapi }), or import "@fw/application/openapi"`;
  assert.deepEqual(lines, [
    missing("api().openapi()"),
    missing("api().openapi()"),
    "200 /there",
    "/there /hi",
    "/dev",
  ], stderr);
});

Deno.test("importing @fw/application/telemetry loads no tracing code until telemetry() is set up", async () => {
  const loaded = await graph("../application/telemetry/telemetry.ts");
  const telemetryFiles = loaded.filter((s) => s.includes("/application/telemetry/"));
  // The plugin factory only: the OpenTelemetry adapter, the meter and the HTTP middleware load
  // in its setup.
  assert.deepEqual(telemetryFiles.map((s) => s.slice(s.indexOf("/application/"))), [
    "/application/telemetry/telemetry.ts",
  ]);
  const all = await graph("../application/telemetry/telemetry.ts", true);
  for (const file of ["_otel.ts", "_http.ts", "_meter.ts"]) {
    assert.ok(all.some((s) => s.endsWith(`/application/telemetry/${file}`)), file);
  }
  const events = await graph("../events/mod.ts");
  assert.ok(!events.some((s) => s.includes("/application/")), "events never imports application");
});

Deno.test("the Redis rate-limit store lives behind its own export", async () => {
  const loaded = await graph("../application/policies/redis_rate_limit.ts", true);
  assert.ok(loaded.some((s) => s.startsWith("npm:/redis@")), loaded.join("\n"));
});

Deno.test("importing @fw/events loads no npm package and no node: module", async () => {
  const loaded = await graph("../events/mod.ts");
  assert.ok(loaded.some((s) => s.endsWith("/events/mod.ts")), "graph was read");
  assert.deepEqual(loaded.filter((s) => s.startsWith("npm:") || s.startsWith("node:")), []);
});

Deno.test("importing @fw/events/core loads no bus, consumer or transport until the plugin needs them", async () => {
  const loaded = await graph("../events/core.ts");
  assert.ok(loaded.some((s) => s.endsWith("/events/publisher.ts")), "graph was read");
  // the publisher reaches the bus through `_publish_hook.ts`: the bus, its consumers and their
  // tracing load with the bus (at warmup, or in production with the first publish)
  // the publish path once a bus exists (`_publish.ts`, with the envelope and delay helpers) and
  // the plugin's wiring of the bus (`_wire.ts`) load with the bus too
  for (
    const name of [
      "event_bus.ts",
      "consumer.ts",
      "_tracing.ts",
      "_invocation.ts",
      "_publish.ts",
      "envelope.ts",
      "schedule/_delay.ts",
      "_wire.ts",
    ]
  ) {
    assert.ok(!loaded.some((s) => s.endsWith(`/events/${name}`)), `${name} is not loaded`);
  }
  assert.deepEqual(
    loaded.filter((s) => s.includes("/events/transports/")).map((s) => s.split("/events/").pop()),
    [
      "transports/http_broker/_local_server.ts",
    ],
  );
  const all = await graph("../events/core.ts", true);
  for (const name of ["event_bus.ts", "consumer.ts", "_in_process.ts", "_publish.ts", "_wire.ts"]) {
    assert.ok(all.some((s) => s.endsWith(`/events/${name}`)), `${name} is reachable`);
  }
});

Deno.test("no graph of @fw/application, its command line or @fw/events reaches the dashboard", async () => {
  for (const entry of ["../application/mod.ts", "../application/cli.ts", "../events/mod.ts"]) {
    const all = await graph(entry, true);
    assert.ok(all.length > 5, `graph of ${entry} was read`);
    assert.deepEqual(all.filter((s) => s.includes("/dashboard/")), [], entry);
  }
});

Deno.test("importing @fw/application loads no stream or policy code until a route needs it", async () => {
  const loaded = await graph("../application/mod.ts");
  // only the option checks and the hooks of the policies: they load at warmup, on demand
  assert.deepEqual(
    loaded.filter((s) => s.includes("/application/policies/")).map((s) => s.split("/").pop()),
    ["_hook.ts", "_options.ts"],
  );
  // only the registry and option types: the SSE and WebSocket code loads at warmup, on demand
  assert.deepEqual(
    loaded.filter((s) => s.includes("/application/streams/")).map((s) => s.split("/").pop()),
    ["_registry.ts"],
  );
  const all = await graph("../application/mod.ts", true);
  for (const name of ["compile_stream.ts", "sse.ts", "websocket.ts"]) {
    assert.ok(all.some((s) => s.endsWith(`/application/streams/${name}`)), `${name} is reachable`);
  }
});

Deno.test("compileEndpoint() names the missing import for a stream or policy route, or response validation outside production, until that code loads", async () => {
  const script = `
    import { Container, createLogger, Int, Stream } from "@fw/runtime";
    import { endpoint } from "@fw/application";
    import { compileEndpoint } from "./application/compile_endpoint.ts";
    const stream = endpoint().returns(Stream({ n: Int })).handle(async function* () { yield { n: 1 }; });
    const cors = endpoint().cors({ origin: "https://app.example" }).handle(() => "hi");
    const checked = endpoint().returns({ n: Int }).handle(() => ({ n: 1 }));
    const base = { container: new Container(), logger: createLogger({ level: "error" }), http: {} };
    const production = { ...base, production: true };
    const attempt = (def, route, app = production) => {
      try { return typeof compileEndpoint(def, { method: "GET", route, app }); }
      catch (e) { return e.message; }
    };
    console.log(attempt(stream, "/ticks"));
    console.log(attempt(cors, "/hi"));
    console.log(attempt(checked, "/n"));
    console.log(attempt(checked, "/n", base));
    await import("@fw/application/compile");
    console.log(attempt(stream, "/ticks"));
    console.log(attempt(cors, "/hi"));
    console.log(attempt(checked, "/n", base));
  `;
  const { lines, stderr } = await evalLines(script);
  const missing = (route: string, what: string) =>
    `Cannot compile route "GET ${route}": the ${what} code is not loaded; api() loads it at warmup, a direct caller of compileEndpoint() imports it from "@fw/application/compile"`;
  assert.deepEqual(lines, [
    missing("/ticks", "stream"),
    missing("/hi", "policy"),
    "function",
    missing("/n", "response validation"),
    "function",
    "function",
    "function",
  ], stderr);
});
