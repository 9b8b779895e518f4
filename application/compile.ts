/**
 * `@fw/application/compile`: `compileEndpoint()` for code that compiles routes itself (a custom
 * host, a test harness, a benchmark) instead of registering them with `api()`. Importing this
 * module loads everything an endpoint may need: the route policies (`.cors()`, `.rateLimit()`,
 * `.secure()`), the stream code (SSE and WebSocket endpoints) and the response validation done
 * outside production. `api()` does not need it: it loads those parts at warmup, and only when a
 * route uses them (response validation: outside production), which keeps the cold start of an
 * application short.
 *
 * @example Compile and call one route
 * ```ts
 * import assert from "node:assert/strict";
 * import { type AppContext, Container, createLogger } from "@fw/runtime";
 * import { endpoint } from "@fw/application";
 * import { compileEndpoint } from "@fw/application/compile";
 *
 * const app = {
 *   production: false,
 *   logger: createLogger({ level: "silent" }),
 *   container: new Container(),
 *   http: { maxBodyBytes: 1024 * 1024, trustProxy: false },
 * } as AppContext;
 * const def = endpoint().cors({ origin: "https://app.example" }).handle(() => "hi");
 * const handler = compileEndpoint(def, { method: "GET", route: "/hi", app });
 * const server = { hostname: "localhost", port: 0, url: "http://localhost/" };
 * const res = await handler(
 *   new Request("http://localhost/hi", { headers: { origin: "https://app.example" } }),
 *   {},
 *   { server },
 * );
 * assert.equal(res.headers.get("access-control-allow-origin"), "https://app.example");
 * ```
 *
 * @module
 */

import "./policies/_route_policies.ts";
import "./response_validation.ts";

export { compileEndpoint } from "./compile_endpoint.ts";
export type { CompileEndpointOptions } from "./endpoint_types.ts";
export { compileStreamEndpoint } from "./streams/compile_stream.ts";
