/**
 * Test helpers: a small {@linkcode AppContext} and a way to call a compiled endpoint without a
 * router or a socket.
 *
 * @module
 */

import {
  type AppContext,
  Container,
  createLogger,
  type HttpSettings,
  MemorySink,
  noopMeter,
  type RequestInfo,
  systemClock,
} from "@fw/runtime";
import "../compile.ts"; // loads the stream and policy code compileEndpoint() uses
import { compileEndpoint } from "../compile_endpoint.ts";
import type { EndpointDefinition } from "../endpoint_types.ts";

/** Options of {@linkcode testApp}. */
export interface TestAppOptions {
  /** `app.production` (default false). */
  production?: boolean;
  /** HTTP settings (defaults: 1 MiB, no proxy trust). */
  http?: Partial<HttpSettings>;
  /** The DI container (default: a new one). */
  container?: Container;
}

/** A test application context and the sink its logger writes to. */
export interface TestApp {
  /** The context. */
  app: AppContext;
  /** Every log record. */
  sink: MemorySink;
}

/** Builds an application context for tests; its logger writes to a `MemorySink` (level debug). */
export function testApp(options: TestAppOptions = {}): TestApp {
  const sink = new MemorySink();
  let http: HttpSettings = { maxBodyBytes: 1024 * 1024, trustProxy: false, ...options.http };
  let meter = noopMeter;
  const app: AppContext = {
    logger: createLogger({ level: "debug", sink }),
    container: options.container ?? new Container(),
    clock: systemClock,
    get meter() {
      return meter;
    },
    setMeter(m) {
      meter = m;
    },
    entryDir: undefined,
    prefix: "",
    production: options.production ?? false,
    get http() {
      return http;
    },
    setHttp(settings) {
      http = { ...http, ...settings };
    },
    server: undefined,
    env: (name) => Deno.env.get(name),
    addRoute() {
      throw new Error("testApp() has no router");
    },
    addMiddleware() {
      throw new Error("testApp() has no middleware chain");
    },
    dispatch() {
      throw new Error("testApp() has no dispatcher: use application() for routing");
    },
    setServer() {},
  };
  return { app, sink };
}

/** Connection facts used by {@linkcode call}. */
export const TEST_INFO: RequestInfo = {
  remoteAddr: { hostname: "127.0.0.1", port: 40000 },
  server: { hostname: "localhost", port: 8000, url: "http://localhost:8000/" },
};

/** Options of {@linkcode call}. */
export interface CallOptions {
  /** Raw path parameters (what the router would pass). */
  params?: Record<string, string>;
  /** The route pattern (default: the request path). */
  route?: string;
  /** The application (default: `testApp().app`). */
  app?: AppContext;
}

/** Compiles `def` and serves one request with it. */
export async function call(
  def: EndpointDefinition,
  input: Request | string,
  options: CallOptions = {},
): Promise<Response> {
  const req = typeof input === "string"
    ? new Request(new URL(input, "http://localhost:8000"))
    : input;
  const app = options.app ?? testApp().app;
  const route = options.route ?? new URL(req.url).pathname;
  const handler = compileEndpoint(def, { method: req.method, route, app });
  return await handler(req, options.params ?? {}, TEST_INFO);
}

/** A JSON POST request. */
export function post(path: string, body: string, headers: Record<string, string> = {}): Request {
  return new Request(new URL(path, "http://localhost:8000"), {
    method: "POST",
    headers: { "content-type": "application/json", ...headers },
    body,
  });
}
