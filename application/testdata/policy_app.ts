/**
 * Test helpers for the route policies: an application from a map of routes, served over a real
 * socket (`http({ port: 0 })`) or called with `app.request()`.
 *
 * @module
 */

import { createLogger, type Logger, MemorySink, type Plugin } from "@fw/runtime";
import { api } from "../api.ts";
import { type Application, application, type ApplicationOptions } from "../application.ts";
import type { EndpointDefinition } from "../endpoint_types.ts";
import { http, type HttpOptions } from "../http.ts";

/** Routes keyed by `"METHOD /path"`. */
export type Routes = Record<string, EndpointDefinition>;

/** Options of {@linkcode makeApp}. */
export interface MakeAppOptions extends ApplicationOptions {
  /** Plugins added before the routes (oauth, telemetry). */
  plugins?: Plugin[];
  /** Serve over a socket with these `http()` settings. */
  http?: HttpOptions;
}

/** An application, its log sink and (when served) its base URL. */
export interface TestServer {
  /** The application. */
  app: Application;
  /** Log records. */
  sink: MemorySink;
  /** `http://127.0.0.1:<port>` when served, else `http://localhost`. */
  url: string;
  /** Stops the application. */
  stop(): Promise<void>;
}

function quietLogger(sink: MemorySink): Logger {
  return createLogger({ level: "debug", sink });
}

/** Builds an application serving `routes` (not started). */
export function makeApp(routes: Routes, options: MakeAppOptions = {}): TestServer {
  const sink = new MemorySink();
  const { plugins = [], http: httpOptions, ...appOptions } = options;
  const app = application({ logger: quietLogger(sink), ...appOptions });
  if (httpOptions !== undefined) {
    app.use(http({ port: 0, hostname: "127.0.0.1", signals: false, ...httpOptions }));
  }
  for (const p of plugins) app.use(p);
  const plugin = api({ autoScan: false });
  for (const [key, def] of Object.entries(routes)) {
    const [method, path] = key.split(" ");
    plugin.route(method, path, def);
  }
  app.use(plugin);
  return { app, sink, url: "http://localhost", stop: () => app.stop() };
}

/** Builds and starts an application over a real socket. */
export async function serve(routes: Routes, options: MakeAppOptions = {}): Promise<TestServer> {
  const t = makeApp(routes, { ...options, http: options.http ?? {} });
  await t.app.start();
  t.url = t.app.address!.url;
  return t;
}

/** Fetches and reads the body, so no resource is left open. */
export async function get(
  url: string,
  init?: RequestInit,
): Promise<{ status: number; headers: Headers; body: string }> {
  const res = await fetch(url, init);
  return { status: res.status, headers: res.headers, body: await res.text() };
}
