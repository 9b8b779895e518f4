/**
 * `application()`: the host plugins are composed into, its lifecycle (setup, warmup, start, stop)
 * and the request dispatcher (router, 404/405, automatic HEAD and OPTIONS, CORS preflights,
 * async context).
 *
 * @module
 */

import {
  type AppContext,
  type Clock,
  Container,
  createLogger,
  type HttpSettings,
  type Logger,
  type Meter,
  type Middleware,
  noopMeter,
  noopTracer,
  type Plugin,
  type RequestInfo,
  type RequestObserver,
  type RouteHandler,
  type RouteRegistration,
  runInNewContext,
  runInSyncContext,
  type ServerInfo,
  systemClock,
  type Tracer,
} from "@fw/runtime";
import { errorResponse, jsonError, safeHandlers, syncHandlers } from "./_errors.ts";
import { preflights } from "./policies/_hook.ts";
import { closeStreams } from "./streams/_registry.ts";
import {
  catchAllOf,
  type ContextProvider,
  contextProviders,
  decodeParams,
  pathOf,
  RequestValues,
  setMatchedRoute,
  stripBody,
  urlOf,
} from "./_dispatch.ts";
import type { Router } from "./router/router.ts";
import { TrieRouter } from "./router/trie_router.ts";

/** Options of {@linkcode application}. */
export interface ApplicationOptions {
  /**
   * The entry directory that `api()` and `events()` scan from: a path, a `file:` URL, or the
   * entry file's `import.meta.url`. Default: the folder of `Deno.mainModule`.
   */
  root?: string | URL;
  /** Logger (default: console, level from `LOG_LEVEL` or `info`). */
  logger?: Logger;
  /** Clock for rate limits, heartbeats and retries (default: the system clock). */
  clock?: Clock;
  /** DI container (default: a new one). */
  container?: Container;
  /** Production mode (default: `NODE_ENV === "production"`); turns off response validation. */
  production?: boolean;
  /** Router implementation (default: `TrieRouter`). */
  router?: Router<RouteEntry>;
}

/** What the router stores for each route. */
export interface RouteEntry {
  /** The compiled handler. */
  handler: RouteHandler;
  /** The handler wrapped so that it never throws or rejects. */
  safe: RouteHandler;
  /**
   * True when the handler gets a synchronous context (it opens an async one itself where it
   * awaits; see `syncHandlers`).
   */
  sync: boolean;
  /** The name of the route's catch-all parameter, if it has one. */
  catchAll: string | undefined;
  /** The registration (source file, metadata). */
  route: RouteRegistration;
}

type Phase = "new" | "warming" | "ready" | "started" | "stopped";

const FETCH_SERVER: ServerInfo = Object.freeze({
  hostname: "localhost",
  port: 0,
  url: "http://localhost",
});
const LOCAL_INFO: RequestInfo = Object.freeze({ server: FETCH_SERVER });

function env(name: string): string | undefined {
  try {
    return Deno.env.get(name);
  } catch {
    return undefined;
  }
}

/**
 * The path of a `file:` URL. Those of `import.meta.url` and `Deno.mainModule` are plain (no
 * escapes, dot segments, query or fragment) and are only sliced: the URL parser's first use
 * costs about 1 M instructions of a cold start.
 */
function filePath(url: string): string {
  return url.startsWith("file:///") && !/[?#%\\\s]|\/\./.test(url)
    ? url.slice(7)
    : decodeURIComponent(new URL(url).pathname);
}

function resolveRoot(root: string | URL | undefined): string | undefined {
  let value: string | undefined;
  if (root instanceof URL) {
    value = root.protocol === "file:" ? decodeURIComponent(root.pathname) : undefined;
  } else if (typeof root === "string") {
    value = root.startsWith("file:") ? filePath(root) : root;
  } else {
    const main = Deno.mainModule;
    value = main.startsWith("file:") ? filePath(main) : undefined;
    if (value) value = value.slice(0, value.lastIndexOf("/")) || "/";
    return value;
  }
  if (value && /\.[cm]?[jt]sx?$/.test(value)) value = value.slice(0, value.lastIndexOf("/")) || "/";
  return value?.replace(/\/+$/, "") || value;
}

/**
 * An application: plugins composed with `.use()`, served by `http()` or called directly with
 * `fetch()` / `request()` in tests.
 */
export class Application {
  readonly #plugins: Plugin[] = [];
  readonly #router: Router<RouteEntry>;
  readonly #middlewares: Middleware[] = [];
  readonly #observers: RequestObserver[] = [];
  #observe: RequestObserver | undefined = undefined;
  readonly #ctx: AppContext;
  #phase: Phase = "new";
  /** Resolved when every plugin started, or when a stop begins (requests held by http() go on). */
  readonly #started = Promise.withResolvers<void>();
  #warming?: Promise<void>;
  #stopping: Promise<void> | undefined = undefined;
  #http: HttpSettings = { maxBodyBytes: 1024 * 1024, trustProxy: false };
  #meter: Meter = noopMeter;
  #tracer: Tracer = noopTracer;
  #providers: ContextProvider[] = [];
  #chain: ((req: Request, info: RequestInfo) => Response | Promise<Response>) | undefined;
  #server?: ServerInfo;
  #handle: (req: Request, info: RequestInfo) => Response | Promise<Response>;

  /**
   * Creates an application; prefer {@linkcode application}.
   *
   * @param options Root, logger, clock, container, production flag and router.
   */
  constructor(options: ApplicationOptions = {}) {
    this.#router = options.router ?? new TrieRouter<RouteEntry>();
    const logger = options.logger ?? createLogger();
    const production = options.production ?? env("NODE_ENV") === "production";
    const entryDir = resolveRoot(options.root);
    const container = options.container ?? new Container();
    const clock = options.clock ?? systemClock;
    // deno-lint-ignore no-this-alias
    const app = this;
    this.#ctx = {
      logger,
      container,
      clock,
      entryDir,
      prefix: "",
      production,
      get meter() {
        return app.#meter;
      },
      setMeter: (meter) => void (this.#meter = meter),
      get tracer() {
        return app.#tracer;
      },
      setTracer: (tracer) => void (this.#tracer = tracer),
      get http() {
        return app.#http;
      },
      setHttp: (settings) => void (this.#http = { ...this.#http, ...settings }),
      get server() {
        return app.#server;
      },
      setServer: (server) => void (this.#server = server),
      stop: () => this.stop(),
      get phase() {
        return app.#phase;
      },
      started: this.#started.promise,
      env,
      addRoute: (route) => this.#addRoute(route),
      addMiddleware: (mw) => {
        if (this.#phase === "started") throw new Error("Cannot add a middleware after start()");
        this.#middlewares.push(mw);
      },
      observeRequests: (observer) => {
        if (this.#phase === "started") throw new Error("Cannot observe requests after start()");
        this.#observers.push(observer);
      },
      dispatch: (req, info) =>
        this.#handle(
          req,
          info === undefined
            ? LOCAL_INFO
            : info.server
            ? info as RequestInfo
            : { ...LOCAL_INFO, ...info },
        ),
    };
    this.#handle = (req, info) => this.#route(req, info);
  }

  /** The application's logger. */
  get logger(): Logger {
    return this.#ctx.logger;
  }

  /** The DI container. */
  get container(): Container {
    return this.#ctx.container;
  }

  /** The address `http()` is listening on, once started. */
  get address(): ServerInfo | undefined {
    return this.#server;
  }

  /** The plugins added with `use()`, in order (for tools such as `generate`). */
  get plugins(): readonly Plugin[] {
    return this.#plugins;
  }

  /** The context plugins receive (for plugin authors and tests). */
  get context(): AppContext {
    return this.#ctx;
  }

  /**
   * Adds a plugin. Plugins run in the order they were added.
   *
   * @param plugin The plugin.
   * @returns This application.
   * @throws {TypeError} When the value is not a plugin, after warmup, or for a second `http()`.
   */
  use(plugin: Plugin): this {
    if (!plugin || typeof plugin !== "object" || typeof plugin.name !== "string") {
      throw new TypeError("application().use() expects a plugin (an object with a name)");
    }
    if (this.#phase !== "new") {
      throw new TypeError(`Cannot use plugin "${plugin.name}" after warmup`);
    }
    if (plugin.name === "http" && this.#plugins.some((p) => p.name === "http")) {
      throw new TypeError('Plugin "http" is used twice: an application has one HTTP server');
    }
    this.#plugins.push(plugin);
    return this;
  }

  #addRoute(route: RouteRegistration): void {
    if (typeof route.handler !== "function") {
      throw new TypeError(`Route "${route.method} ${route.path}" has no handler function`);
    }
    const method = route.method.toUpperCase();
    const handler = route.handler;
    const logger = this.#ctx.logger;
    const safe: RouteHandler = safeHandlers.has(handler) ? handler : (req, params, info) => {
      try {
        const res = handler(req, params, info);
        return res instanceof Promise ? res.catch((err) => errorResponse(err, logger, req)) : res;
      } catch (err) {
        return errorResponse(err, logger, req);
      }
    };
    try {
      this.#router.add(method, route.path, {
        handler,
        safe,
        sync: syncHandlers.has(handler),
        catchAll: catchAllOf(route.path),
        route,
      });
    } catch (err) {
      const existing = this.#router.find(method, route.path.replace(/[:*]\w+/g, "x"));
      const other = existing?.value.route.source;
      const mine = route.source ? ` (${route.source})` : "";
      throw new Error(
        `${(err as Error).message}${mine}${other ? `; the other one is ${other}` : ""}`,
        { cause: err },
      );
    }
  }

  /**
   * Runs every plugin's setup, then every plugin's warmup (loading routes and handlers). Called
   * by `start()` and by the first `fetch()`; safe to call more than once.
   *
   * @throws {Error} Configuration mistakes found by any plugin.
   */
  warmup(): Promise<void> {
    if (this.#phase !== "new") return this.#warming ?? Promise.resolve();
    this.#phase = "warming";
    this.#warming = (async () => {
      for (const p of this.#plugins) await p.setup?.(this.#ctx);
      for (const p of this.#plugins) await p.warmup?.(this.#ctx);
      this.#compose();
      this.#phase = "ready";
    })();
    this.#warming.catch(() => this.#phase = "stopped");
    return this.#warming;
  }

  #compose(): void {
    const providers: ContextProvider[] = [];
    const generic: Middleware[] = [];
    for (const mw of this.#middlewares) {
      const provider = contextProviders.get(mw);
      if (provider !== undefined) providers.push(provider);
      else generic.push(mw);
    }
    this.#providers = providers;
    const observers = [...this.#observers];
    this.#observe = observers.length <= 1 ? observers[0] : (method, route) => {
      let dones: ((status: number) => void)[] | undefined;
      for (const o of observers) {
        const done = o(method, route);
        if (done !== undefined) (dones ??= []).push(done);
      }
      return dones && ((status) => dones.forEach((done) => done(status)));
    };
    if (generic.length === 0) {
      this.#handle = providers.length === 0
        ? (req, info) => this.#route(req, info)
        : (req, info) => this.#provide(req, info, 0, new RequestValues(req));
      return;
    }
    // With middlewares, the request's async context opens before the first middleware, so
    // middlewares see the trace id (and the values of context providers such as `oauth()`),
    // and can add values of their own with runInContext.
    let next = (req: Request, info: RequestInfo) => this.#dispatch(req, info, undefined);
    for (let i = generic.length - 1; i >= 0; i--) {
      const mw = generic[i];
      const inner = next;
      next = (req, info) => mw(req, info, () => Promise.resolve(inner(req, info)));
    }
    this.#chain = next;
    this.#handle = (req, info) => this.#provide(req, info, 0, new RequestValues(req));
  }

  /** Runs the context providers from `index` on, then the middlewares or the router. */
  #provide(
    req: Request,
    info: RequestInfo,
    index: number,
    values: RequestValues,
  ): Response | Promise<Response> {
    const providers = this.#providers;
    for (let i = index; i < providers.length; i++) {
      const added = providers[i](req);
      if (added instanceof Promise) {
        return added.then((more) => {
          if (more !== undefined) Object.assign(values, more);
          return this.#provide(req, info, i + 1, values);
        });
      }
      if (added !== undefined) Object.assign(values, added);
    }
    const chain = this.#chain;
    if (chain === undefined) return this.#dispatch(req, info, values);
    // a new scope, not a nested one: see #dispatch
    return runInNewContext(values as unknown as Record<string, unknown>, chain, req, info);
  }

  /**
   * Warms up, then starts every plugin (`http()` starts listening).
   *
   * @returns This application.
   */
  async start(): Promise<this> {
    await this.warmup();
    if (this.#phase === "started") return this;
    for (const p of this.#plugins) await p.start?.(this.#ctx);
    this.#phase = "started";
    this.#started.resolve();
    return this;
  }

  /**
   * Stops in order: runs every plugin's `stopping` in registration order (`http({ health })`
   * answers 503 on its readiness route and keeps serving for `drainDelayMs`; the Event Server then
   * closes its WebSocket and SSE connections), closes open stream connections (SSE streams end, WebSockets close with
   * 1001), drains every plugin in registration order (`http()` stops listening and lets in-flight
   * requests finish, up to its `shutdownTimeoutMs`), stops every plugin in reverse order (`events()`
   * finishes admitted deliveries, then closes its transports), then disposes the container's
   * singletons. Calling it again, or while it runs, returns the same promise.
   */
  stop(): Promise<void> {
    if (this.#stopping) return this.#stopping;
    if (this.#phase === "stopped") return Promise.resolve();
    this.#phase = "stopped";
    this.#started.resolve();
    return this.#stopping = this.#stop().finally(() => this.#stopping = undefined);
  }

  async #stop(): Promise<void> {
    const errors: unknown[] = [];
    for (const p of this.#plugins) {
      try {
        await p.stopping?.(this.#ctx);
      } catch (err) {
        errors.push(err);
      }
    }
    await closeStreams(this.#ctx);
    for (const p of this.#plugins) {
      try {
        await p.drain?.(this.#ctx);
      } catch (err) {
        errors.push(err);
      }
    }
    for (const p of [...this.#plugins].reverse()) {
      try {
        await p.stop?.(this.#ctx);
      } catch (err) {
        errors.push(err);
      }
    }
    try {
      await this.#ctx.container.dispose();
    } catch (err) {
      errors.push(err);
    }
    if (errors.length) throw new AggregateError(errors, "Stopping the application failed");
  }

  /**
   * Handles a request without a socket (tests, serverless hosts). Warms up on first use.
   *
   * @param req The request.
   * @param info Connection facts (peer address, server).
   * @returns The response.
   */
  fetch(req: Request, info?: Partial<RequestInfo>): Promise<Response> {
    const full = info ? { ...LOCAL_INFO, ...info } : LOCAL_INFO;
    if (this.#phase !== "ready" && this.#phase !== "started") {
      return this.warmup().then(() => this.#handle(req, full));
    }
    return Promise.resolve(this.#handle(req, full));
  }

  /**
   * Shorthand for `fetch()` with a path relative to `http://localhost`.
   *
   * @param path Path and query, for example `/users/7?verbose=1`.
   * @param init Request options (method, headers, body).
   * @returns The response.
   */
  request(path: string, init?: RequestInit): Promise<Response> {
    return this.fetch(new Request(new URL(path, "http://localhost"), init));
  }

  #route(req: Request, info: RequestInfo): Response | Promise<Response> {
    return this.#dispatch(req, info, new RequestValues(req));
  }

  /**
   * Routes a request. `values` is the request's context to open; `undefined` when the
   * middlewares already opened it.
   */
  #dispatch(
    req: Request,
    info: RequestInfo,
    values: RequestValues | undefined,
  ): Response | Promise<Response> {
    const path = pathOf(urlOf(req));
    const method = req.method;
    let match = this.#router.find(method, path);
    let head = false;
    if (!match) {
      if (method === "HEAD") {
        match = this.#router.find("GET", path);
        head = match !== undefined;
      }
      if (!match) {
        const observe = this.#observe;
        if (observe === undefined) return this.#miss(req, method, path);
        const done = observe(method, undefined);
        const missed = this.#miss(req, method, path);
        done?.(missed.status);
        return missed;
      }
    }
    const raw = match.params;
    const entry = match.value;
    const observe = this.#observe;
    const done = observe === undefined ? undefined : observe(method, match.pattern);
    let params: Record<string, string> = raw;
    for (const _ in raw) {
      const decoded = decodeParams(raw, entry.catchAll);
      if (decoded instanceof Response) {
        done?.(decoded.status);
        return decoded;
      }
      params = decoded;
      break;
    }
    let res: Response | Promise<Response>;
    if (values === undefined) {
      setMatchedRoute(req, match.pattern);
      res = entry.safe(req, params, info);
    } else {
      const store = values as unknown as Record<string, unknown>;
      // A request's scope is a root: Deno can resume a keep-alive connection's next request in
      // the frame its previous response left behind, and a nested scope would inherit that
      // request's user and trace id.
      res = entry.sync
        ? runInSyncContext(store, () => entry.safe(req, params, info))
        : runInNewContext(store, () => entry.safe(req, params, info));
    }
    if (head) res = Promise.resolve(res).then(stripBody);
    return done === undefined ? res : settle(res, done);
  }

  #miss(req: Request, method: string, path: string): Response {
    const allowed = this.#router.allowed(path);
    if (allowed.length === 0) return jsonError(404, `No route matches "${method} ${path}"`);
    if (method === "OPTIONS") {
      const preflight = this.#preflight(req, path, allowed);
      if (preflight !== undefined) return preflight;
    }
    const allow = [
      ...new Set([...allowed, ...(allowed.includes("GET") ? ["HEAD"] : []), "OPTIONS"]),
    ]
      .sort().join(", ");
    if (method === "OPTIONS") return new Response(null, { status: 204, headers: { allow } });
    return jsonError(405, `Method "${method}" is not allowed on "${path}"`, { allow });
  }

  /** A CORS preflight answered by the route of the requested method, when it has `.cors()`. */
  #preflight(req: Request, path: string, allowed: readonly string[]): Response | undefined {
    const requested = req.headers.get("access-control-request-method");
    if (requested === null || !req.headers.has("origin")) return undefined;
    const corsOf = (method: string) => {
      const entry = this.#router.find(method, path) ??
        (method === "HEAD" ? this.#router.find("GET", path) : undefined);
      return entry === undefined ? undefined : preflights.get(entry.value.handler);
    };
    const policy = corsOf(requested.toUpperCase());
    if (policy === undefined) return undefined;
    const methods = allowed.filter((m) => corsOf(m) !== undefined);
    if (methods.includes("GET") && !methods.includes("HEAD")) methods.push("HEAD");
    return policy.preflight(req, methods.sort());
  }
}

/** Tells a request observer the status of a response once it is ready (500 if it failed). */
function settle(
  res: Response | Promise<Response>,
  done: (status: number) => void,
): Response | Promise<Response> {
  if (res instanceof Response) {
    done(res.status);
    return res;
  }
  return res.then((r) => {
    done(r.status);
    return r;
  }, (error) => {
    done(500);
    throw error;
  });
}

/**
 * Creates an application.
 *
 * @param options Root, logger, clock, container, production flag and router.
 * @returns The application.
 *
 * @example Testing without a socket
 * ```ts
 * import assert from "node:assert/strict";
 * import { application } from "@fw/application";
 *
 * const app = application().use({
 *   name: "hello",
 *   warmup(ctx) {
 *     ctx.addRoute({ method: "GET", path: "/hello/:name", handler: (_req, p) => new Response(`hi ${p.name}`) });
 *   },
 * });
 * const res = await app.request("/hello/ada");
 * assert.equal(await res.text(), "hi ada");
 * assert.equal((await app.request("/nope")).status, 404);
 * ```
 */
export function application(options?: ApplicationOptions): Application {
  return new Application(options);
}
