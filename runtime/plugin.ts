/**
 * The plugin interface an application is composed from. `@fw/application` implements the host;
 * `@fw/application` (`http()`, `api()`, `telemetry()`, `oauth()`) and `@fw/events` (`events()`)
 * provide plugins. It lives in the runtime so that the events member can provide a plugin without
 * depending on the application member.
 *
 * Phases run for every plugin in `use()` order: all `setup`, then all `warmup`, then all `start`;
 * `stop` runs in reverse order and drains in-flight work.
 *
 * @module
 */

import type { Clock } from "./clock.ts";
import type { Container } from "./di.ts";
import type { Logger } from "./logger.ts";
import type { Meter } from "./metrics.ts";
import type { Tracer } from "./tracer.ts";

/** Address of the running HTTP server (under `app.fetch`: hostname `localhost`, port 0). */
export interface ServerInfo {
  /** Host name or address the server is bound to. */
  readonly hostname: string;
  /** Bound port. */
  readonly port: number;
  /** Base URL, for example `http://127.0.0.1:8000`. */
  readonly url: string;
}

/** Per-request connection facts handed to route handlers. */
export interface RequestInfo {
  /** The peer's address, when known. */
  readonly remoteAddr?: { readonly hostname: string; readonly port: number };
  /** The server that received the request. */
  readonly server: ServerInfo;
}

/** Handles one matched request; `params` are already percent-decoded. */
export type RouteHandler = (
  req: Request,
  params: Record<string, string>,
  info: RequestInfo,
) => Response | Promise<Response>;

/** Wraps every request (oauth, telemetry). Applications with no middleware pay nothing. */
export type Middleware = (
  req: Request,
  info: RequestInfo,
  next: () => Promise<Response>,
) => Promise<Response>;

/**
 * A light observer of the requests the router answers (`AppContext.observeRequests`), far
 * cheaper than a {@linkcode Middleware}: no async context, no promise per request, and nothing
 * at all for applications without one. It is called as the router has matched the request and
 * before the handler runs, with the request's method and the matched route pattern (`undefined`
 * when no route matched: 404, 405 and preflight answers). It may return a function that is told
 * the response's status once the response is ready (500 when the handler threw), so the
 * observer can time the requests it samples (from routing to the response: middlewares'
 * own time is not included). Requests a middleware answers without calling `next()` are not
 * seen. An observer must not throw.
 */
export type RequestObserver = (
  method: string,
  route: string | undefined,
) => ((status: number) => void) | undefined;

/** A route added by a plugin. */
export interface RouteRegistration {
  /** HTTP method in upper case. */
  method: string;
  /** Pattern: `/users/:id`; a catch-all `/files/*path` only as the last segment. */
  path: string;
  /** The compiled handler. */
  handler: RouteHandler;
  /** The file that defined the route (named in conflict errors). */
  source?: string;
  /** Metadata for generators (the endpoint definition). */
  meta?: unknown;
}

/** HTTP limits set by `http()`; the defaults apply under `app.fetch`. */
export interface HttpSettings {
  /** Largest accepted request body in bytes (default 1 MiB). */
  readonly maxBodyBytes: number;
  /** True when some proxy is trusted for the client address, scheme and host (default false). */
  readonly trustProxy: boolean;
  /**
   * Which forwarding hops are trusted: `hop` 0 is the socket peer, 1 the last forwarded entry, and
   * so on. Without it, `trustProxy: true` trusts the socket peer only (one hop).
   */
  readonly proxyTrust?: (address: string, hop: number) => boolean;
  /** Longest time to wait for the rest of a request body, in milliseconds (`http()` sets it). */
  readonly bodyTimeoutMs?: number;
}

/** What a plugin sees of the application. */
export interface AppContext {
  /** The application's logger. */
  readonly logger: Logger;
  /** The DI container (singletons; scopes per request and event). */
  readonly container: Container;
  /** The application's clock. */
  readonly clock: Clock;
  /** Metrics: a no-op meter unless `telemetry()` set one in its setup. */
  readonly meter: Meter;
  /** Replaces the meter (telemetry plugins, during setup). */
  setMeter(meter: Meter): void;
  /**
   * Tracing: `noopTracer` unless `telemetry()` set one in its setup. Optional so that hand-made
   * contexts in tests need not provide it; absent means tracing is off.
   */
  readonly tracer?: Tracer;
  /** Replaces the tracer (telemetry plugins, during setup). Optional like `tracer`. */
  setTracer?(tracer: Tracer): void;
  /** Absolute directory of the entry file: `application({ root })` or the main module's folder. */
  readonly entryDir: string | undefined;
  /** The module path (`module().path()`), `""` at the root, never with a trailing slash. */
  readonly prefix: string;
  /** True when `NODE_ENV` is `production`. */
  readonly production: boolean;
  /** HTTP limits. */
  readonly http: HttpSettings;
  /** Changes HTTP limits (the `http()` plugin, during setup). */
  setHttp(settings: Partial<HttpSettings>): void;
  /** The listening server, once `http()` has started. */
  readonly server: ServerInfo | undefined;
  /** Reads an environment variable (undefined without permission). */
  env(name: string): string | undefined;
  /** Adds an HTTP route. */
  addRoute(route: RouteRegistration): void;
  /** Adds a middleware around every request. */
  addMiddleware(mw: Middleware): void;
  /**
   * Adds a {@linkcode RequestObserver}, called for every routed request (during setup or
   * warmup). Optional so that hand-made contexts in tests need not provide it.
   */
  observeRequests?(observer: RequestObserver): void;
  /** Routes a request through the middlewares and the router (for server plugins such as `http()`). */
  dispatch(req: Request, info?: Partial<RequestInfo>): Response | Promise<Response>;
  /** Records the listening address (server plugins, on start and stop). */
  setServer(server: ServerInfo | undefined): void;
  /**
   * Stops the whole application, in order (server plugins call it on SIGTERM). Optional so that
   * hand-made contexts in tests need not provide it.
   */
  stop?(): Promise<void>;
  /**
   * Where the application is in its lifecycle: `"started"` once every plugin started,
   * `"stopped"` from the moment a stop begins (readiness routes answer 503 then). Optional so that
   * hand-made contexts in tests need not provide it.
   */
  readonly phase?: "new" | "warming" | "ready" | "started" | "stopped";
  /**
   * Settles once every plugin has started (or a stop began first). `http()` listens when its own
   * `start()` runs, before the plugins after it; it holds the requests that arrive before this
   * settles, so a handler never runs before the event bus and the other plugins are up. Optional
   * so that hand-made contexts in tests need not provide it.
   */
  readonly started?: Promise<void>;
}

/** A unit of composition: `application().use(plugin)`. */
export interface Plugin {
  /** Name used in logs and errors. */
  readonly name: string;
  /** Registers settings (meter, HTTP limits). */
  setup?(ctx: AppContext): void | Promise<void>;
  /** Loads and compiles routes or handlers. */
  warmup?(ctx: AppContext): void | Promise<void>;
  /** Listens or subscribes. */
  start?(ctx: AppContext): void | Promise<void>;
  /**
   * Runs first when a stop begins, for every plugin in registration order, before open streams
   * close and before any `drain`: a server with readiness keeps serving while its load balancer
   * notices the 503 (`http({ health })`), then plugins holding long-lived connections close them
   * (the Event Server tells its clients to reconnect), so that the server's drain does not wait
   * for them.
   */
  stopping?(ctx: AppContext): void | Promise<void>;
  /**
   * Stops taking new work and finishes what was admitted (a server stops listening and lets
   * in-flight requests finish). Runs for every plugin, in registration order, before any `stop`,
   * so that requests still running can use every other plugin.
   */
  drain?(ctx: AppContext): void | Promise<void>;
  /** Drains in-flight work and releases resources. */
  stop?(ctx: AppContext): void | Promise<void>;
}
