/**
 * Compiles stream endpoints: server streams over Server-Sent Events or a WebSocket,
 * client and bidirectional streams over a WebSocket.
 *
 * Per request, before any byte is streamed: the route policies run (a cross-origin request from
 * an origin `.cors()` does not allow gets 403, then `.rateLimit()` 429, then `.secure()` 401/403,
 * each as an ordinary HTTP response), the transport is chosen (`Upgrade: websocket`, else
 * `Accept: text/event-stream` for server streams, else 400), params and query are validated
 * (400), a server stream's SSE body is read and validated, and injected providers are resolved.
 * Only then is the SSE response or the WebSocket upgrade returned and the handler started.
 *
 * The handler's end closes the connection normally (SSE end of stream, WebSocket 1000); a
 * client stream's result is sent as the last message first. A handler error is logged when it
 * is not an `HttpException` and reaches the client as the error envelope: an `event: error` SSE
 * event, or `{"error": envelope}` and close code 1011. When the client leaves, `ctx.signal`
 * aborts, `ctx.send()` rejects with that abort (ending the handler quietly), a returned async
 * iterator is stopped, and the DI scope is disposed.
 *
 * @module
 */

import type {
  AppContext,
  ErrorResponseParts,
  ProviderMap,
  RequestInfo,
  RouteHandler,
  Scope,
  ServerInfo,
  Validator,
} from "@fw/runtime";
import { resumeContext, tryContext } from "@fw/runtime";
import { endStreamSpan, holdStreamSpan } from "./_span.ts";
import {
  errorResponse,
  invalidInput,
  jsonError,
  reportError,
  safeHandlers,
  syncHandlers,
} from "../_errors.ts";
import { hasPolicies, preflights, RoutePolicies } from "../policies/_route_policies.ts";
import { StreamRequestContext, type StreamShared } from "./_context.ts";
import { type LiveStream, streamCompiler, streamRegistry } from "./_registry.ts";
import { readJsonBody } from "../body.ts";
import { RequestValues } from "../_dispatch.ts";
import type {
  CompileEndpointOptions,
  EndpointDefinition,
  EndpointMode,
} from "../endpoint_types.ts";
import {
  type ContextShared,
  inputValidator,
  type RawParams,
  validateParamsAndQuery,
} from "../request_context.ts";
import { SseStream } from "./sse.ts";
import { CloseCode, WebSocketChannel, type WebSocketChannelOptions } from "./websocket.ts";
import { checkStreamOptions, type ResolvedStreamOptions } from "./options.ts";

type AnyHandler = (...args: unknown[]) => unknown;

const SSE_HEADERS: HeadersInit = {
  "content-type": "text/event-stream; charset=utf-8",
  "cache-control": "no-cache",
};

function isAsyncIterable(value: unknown): value is AsyncIterable<unknown> {
  return typeof value === "object" && value !== null &&
    typeof (value as AsyncIterable<unknown>)[Symbol.asyncIterator] === "function";
}

function wantsWebSocket(req: Request): boolean {
  const upgrade = req.headers.get("upgrade");
  return upgrade !== null && upgrade.toLowerCase() === "websocket";
}

function wantsSse(req: Request): boolean {
  return req.headers.get("accept")?.includes("text/event-stream") === true;
}

function abortPromise(signal: AbortSignal): { promise: Promise<typeof ABORTED>; dispose(): void } {
  let listener: (() => void) | undefined;
  const promise = new Promise<typeof ABORTED>((resolve) => {
    if (signal.aborted) return resolve(ABORTED);
    listener = () => resolve(ABORTED);
    signal.addEventListener("abort", listener, { once: true });
  });
  return { promise, dispose: () => listener && signal.removeEventListener("abort", listener) };
}

const ABORTED = Symbol("aborted");

type Envelope = ErrorResponseParts["body"];

/**
 * One open connection: its `ctx` and DI scope, how to end it normally, with an error or for a
 * server stop, and when it is done. The transport is the context's (`ctx._sse` or `ctx._ws`).
 */
abstract class Connection implements LiveStream {
  /**
   * The request's async-context values, re-entered when the handler's result settles, or
   * `REBUILD` when they hold nothing but the request (see `keptValues`).
   */
  readonly store: Record<string, unknown> | typeof REBUILD | undefined;
  /** `done` once asked for: its promise and resolver while pending, then a settled promise. */
  #done: { promise: Promise<void>; resolve(): void } | Promise<void> | undefined = undefined;

  constructor(
    readonly ctx: StreamRequestContext,
    readonly scope: Scope | undefined,
    readonly owner: CompiledStream,
  ) {
    const store = this.store = keptValues(tryContext(), ctx.req);
    holdStreamSpan(store);
  }

  /** The request's async-context values. */
  values(): Record<string, unknown> | undefined {
    const store = this.store;
    return store === REBUILD
      ? new RequestValues(this.ctx.req) as unknown as Record<string, unknown>
      : store;
  }

  /** Settles when the handler finished and the connection is closed (created when asked for). */
  get done(): Promise<void> {
    const done = this.#done;
    if (done instanceof Promise) return done;
    if (done !== undefined) return done.promise;
    let resolve!: () => void;
    const promise = new Promise<void>((r) => resolve = r);
    this.#done = { promise, resolve };
    return promise;
  }

  /** Marks the connection done. */
  finished(): void {
    const done = this.#done;
    if (done === undefined) this.#done = RESOLVED;
    else if (!(done instanceof Promise)) {
      this.#done = done.promise;
      done.resolve();
    }
  }

  /** Settles once the transport is closed. */
  abstract get closed(): Promise<unknown>;
  /** Ends after the handler finished. */
  abstract end(): void;
  /** Sends the error envelope and ends. */
  abstract fail(envelope: Envelope): void;
  /** Ends the connection for a server stop. */
  abstract shutdown(): void;
}

const RESOLVED: Promise<void> = Promise.resolve();

/** Marks a connection whose context values are rebuilt from its request when needed. */
const REBUILD = Symbol("rebuild");

/**
 * What a connection keeps of its request's context values: nothing (`REBUILD`) when they are a
 * plain `RequestValues` holding only the request, since `new RequestValues(req)` answers the same
 * (the trace id is cached per request), else the values themselves.
 */
function keptValues(
  values: Record<string, unknown> | undefined,
  req: Request,
): Record<string, unknown> | typeof REBUILD | undefined {
  if (
    values instanceof RequestValues && Object.getPrototypeOf(values) === RequestValues.prototype &&
    values.request === req && values._traceId === undefined && Object.keys(values).length === 2
  ) return REBUILD;
  return values;
}

// The reactions on a handler's promise, bound to their connection: a bound function is smaller
// than a closure and needs no context object.
function fulfilled(this: Connection, value: unknown): void {
  this.owner.settled(this, value, false);
}
function rejected(this: Connection, error: unknown): void {
  this.owner.settled(this, error, true);
}

class SseConnection extends Connection {
  get closed(): Promise<unknown> {
    return this.ctx._sse!.done;
  }
  end(): void {
    this.ctx._sse!.close();
  }
  fail(envelope: Envelope): void {
    const stream = this.ctx._sse!;
    stream.sendJson(JSON.stringify(envelope), { event: "error" }).catch(() => {});
    stream.close();
  }
  shutdown(): void {
    this.ctx._sse!.close();
  }
}

class WsConnection extends Connection {
  get closed(): Promise<unknown> {
    return this.ctx._ws!.closed;
  }
  end(): void {
    this.ctx._ws!.close(CloseCode.Normal);
  }
  fail(envelope: Envelope): void {
    this.ctx._ws!.fail(CloseCode.InternalError, envelope);
  }
  shutdown(): void {
    this.ctx._ws!.close(CloseCode.GoingAway, "Server is stopping");
  }
}

/**
 * What a WebSocket's `ctx` keeps of its connection facts once upgraded. The runtime closes the
 * request at the upgrade, after which its peer address can no longer be read (it throws
 * "Request closed"); so instead of the request's own facts (two objects per connection), the
 * connection keeps one object per server that answers the same.
 */
class UpgradedInfo implements RequestInfo {
  constructor(readonly server: ServerInfo) {}
  get remoteAddr(): never {
    throw new TypeError("Request closed");
  }
}

const upgradedInfos = new WeakMap<ServerInfo, UpgradedInfo>();

function upgradedInfo(info: RequestInfo): RequestInfo {
  try {
    void info.remoteAddr;
    return info; // still readable (not `Deno.serve`): keep it
  } catch {
    let shared = upgradedInfos.get(info.server);
    if (shared === undefined) {
      upgradedInfos.set(info.server, shared = new UpgradedInfo(info.server));
    }
    return shared;
  }
}

/** A compiled stream endpoint; `run` is the route handler. */
class CompiledStream {
  readonly #mode: Exclude<EndpointMode, "unary">;
  readonly #handler: AnyHandler;
  readonly #inject: ProviderMap | undefined;
  readonly #params: Validator<unknown> | undefined;
  readonly #query: Validator<unknown> | undefined;
  readonly #body: Validator<unknown> | undefined;
  readonly #bodyOptional: boolean;
  readonly #inbound: Validator<unknown> | undefined;
  readonly #outbound: Validator<unknown> | undefined;
  readonly #result: Validator<unknown> | undefined;
  readonly #shared: ContextShared;
  readonly #stream: StreamShared;
  readonly #app: AppContext;
  readonly #label: string;
  readonly #options: ResolvedStreamOptions;
  readonly #live: Set<LiveStream>;
  /** The options of every channel of this endpoint (see `#channelOptions`). */
  #wsOptions: WebSocketChannelOptions | undefined = undefined;
  /** True for an `async function` handler: it runs in an async scope (see `#run`). */
  readonly #asyncHandler: boolean;

  constructor(def: EndpointDefinition, { method, route, app, streams }: CompileEndpointOptions) {
    const meta = def.meta;
    this.#label = `${method} ${route}`;
    if (method !== "GET") {
      throw new TypeError(
        `Cannot compile route "${this.#label}": stream endpoints are GET routes (a WebSocket upgrade or an EventSource request)`,
      );
    }
    this.#mode = def.mode as Exclude<EndpointMode, "unary">;
    this.#handler = def.handler as AnyHandler;
    this.#asyncHandler = def.handler.constructor.name === "AsyncFunction";
    this.#inject = meta.inject;
    this.#params = inputValidator(meta.params, "params", this.#label);
    this.#query = inputValidator(meta.query, "query", this.#label);
    const bodyIsStream = meta.body?.kind === "stream";
    this.#body = bodyIsStream ? undefined : inputValidator(meta.body, "body", this.#label);
    this.#bodyOptional = meta.body?.optional === true;
    this.#inbound = bodyIsStream ? inputValidator(meta.body, "message", this.#label) : undefined;
    const returns = meta.returns?.schema;
    this.#outbound = returns?.kind === "stream"
      ? inputValidator(returns, "message", this.#label)
      : undefined;
    this.#result = returns !== undefined && returns.kind !== "stream"
      ? inputValidator(returns, "message", this.#label)
      : undefined;
    this.#shared = { route, app, status: 200 };
    this.#stream = {
      outbound: this.#outbound,
      label: this.#label,
      streamIn: this.#mode !== "server-stream",
    };
    this.#app = app;
    this.#options = checkStreamOptions(streams, this.#label);
    this.#live = streamRegistry(app);
  }

  /**
   * Serves one request. The dispatcher opened a synchronous context (see `compileStreamEndpoint`):
   * only a body read and `.inject()` providers, which may await, get an async scope, so an idle
   * connection of an endpoint without them keeps no async-context frame alive.
   */
  run(req: Request, params: RawParams, info: RequestInfo): Response | Promise<Response> {
    try {
      const ws = wantsWebSocket(req);
      if (!ws && (this.#mode !== "server-stream" || !wantsSse(req))) {
        return jsonError(
          400,
          this.#mode === "server-stream"
            ? `Stream endpoint "${this.#label}" needs "Accept: text/event-stream" or a WebSocket upgrade`
            : `Stream endpoint "${this.#label}" needs a WebSocket upgrade`,
        );
      }
      const ctx = new StreamRequestContext(req, params, info, this.#shared, this.#stream);
      const invalid = validateParamsAndQuery(ctx, this.#params, this.#query);
      if (invalid !== undefined) return invalid;
      if ((!ws && this.#body !== undefined) || this.#inject !== undefined) {
        return resumeContext(tryContext(), true, () => this.#prepare(req, ctx, ws));
      }
      return this.#start(req, ctx, ws, undefined, undefined);
    } catch (error) {
      return this.#fail(error);
    }
  }

  /** Reads an SSE server stream's body and resolves `.inject()` providers, then starts. */
  async #prepare(req: Request, ctx: StreamRequestContext, ws: boolean): Promise<Response> {
    try {
      if (!ws && this.#body !== undefined) {
        const raw = await readJsonBody(
          req,
          this.#app.http.maxBodyBytes,
          this.#app.http.bodyTimeoutMs,
        );
        if (raw === undefined && !this.#bodyOptional) {
          return invalidInput([{ field: "body", message: "body is required" }]);
        }
        if (raw !== undefined) {
          const r = this.#body(raw);
          if (!r.ok) return invalidInput(r.errors);
          ctx._bodyValue = r.value;
        }
      }
      if (req.method === "HEAD") return new Response(null, { status: 200, headers: SSE_HEADERS });
      let scope: Scope | undefined;
      let deps: unknown;
      if (this.#inject !== undefined) {
        scope = this.#app.container.createScope();
        try {
          deps = await scope.resolveAll(this.#inject);
        } catch (error) {
          await this.#dispose(scope);
          throw error;
        }
      }
      return this.#start(req, ctx, ws, scope, deps);
    } catch (error) {
      return this.#fail(error);
    }
  }

  /** Answers with the SSE response or the WebSocket upgrade, and starts the handler. */
  #start(
    req: Request,
    ctx: StreamRequestContext,
    ws: boolean,
    scope: Scope | undefined,
    deps: unknown,
  ): Response {
    if (req.method === "HEAD") return new Response(null, { status: 200, headers: SSE_HEADERS });
    return ws ? this.#upgrade(req, ctx, scope, deps) : this.#sse(ctx, scope, deps);
  }

  #sse(ctx: StreamRequestContext, scope: Scope | undefined, deps: unknown): Response {
    const o = this.#options;
    const stream = new SseStream({
      clock: this.#app.clock,
      heartbeatMs: o.heartbeatMs,
      highWaterMark: o.sseHighWaterMark,
      lastEventId: ctx.lastEventId,
      retryMs: o.retryMs,
    });
    ctx._sse = stream;
    this.#open(new SseConnection(ctx, scope, this), deps);
    return stream.response();
  }

  /**
   * Registers the connection and starts its handler. No `async` frame is held per connection:
   * each step continues from a promise callback, so an idle connection holds one reaction on
   * its handler's promise and nothing else.
   */
  #open(conn: Connection, deps: unknown): void {
    this.#live.add(conn);
    const ctx = conn.ctx;
    if (this.#mode === "server-stream" && this.#body !== undefined && ctx._ws !== undefined) {
      this.#firstMessage(ctx, ctx._ws).then(
        (ok) =>
          ok ? this.#run(conn, deps) : resumeContext(conn.values(), true, () => this.#ended(conn)),
        (error) => resumeContext(conn.values(), true, () => this.#failed(conn, error)),
      );
    } else this.#run(conn, deps);
  }

  #upgrade(
    req: Request,
    ctx: StreamRequestContext,
    scope: Scope | undefined,
    deps: unknown,
  ): Response {
    let upgraded: { socket: WebSocket; response: Response };
    try {
      upgraded = Deno.upgradeWebSocket(req);
    } catch (error) {
      if (scope !== undefined) void this.#dispose(scope);
      return jsonError(400, `Cannot upgrade to a WebSocket: ${(error as Error).message}`);
    }
    const channel = new WebSocketChannel(
      upgraded.socket,
      this.#wsOptions ??= this.#channelOptions(),
    );
    ctx._ws = channel;
    ctx._info = upgradedInfo(ctx._info);
    if (this.#mode === "server-stream" && this.#body === undefined) channel.discardIncoming();
    this.#open(new WsConnection(ctx, scope, this), deps);
    return upgraded.response;
  }

  /** Server stream over a WebSocket with a body: the first message; later ones are dropped. */
  async #firstMessage(ctx: StreamRequestContext, channel: WebSocketChannel): Promise<boolean> {
    const first = await channel.messages().next();
    channel.discardIncoming();
    if (first.done) return false;
    ctx._bodyValue = first.value;
    return true;
  }

  /** Calls the handler and continues once its result settles. */
  #run(conn: Connection, deps: unknown): void {
    let result: unknown;
    try {
      // An `async` handler runs in an async scope (it may await), any other in the request's
      // synchronous one, as unary handlers do.
      result = resumeContext(
        conn.values(),
        this.#asyncHandler,
        () => this.#inject !== undefined ? this.#handler(deps, conn.ctx) : this.#handler(conn.ctx),
      );
    } catch (error) {
      return this.#failed(conn, error);
    }
    // Outside an async scope (the usual case) this reaction keeps no context frame alive; the
    // request's values are re-entered when the handler's promise settles.
    if (result instanceof Promise) result.then(fulfilled.bind(conn), rejected.bind(conn));
    else this.settled(conn, result, false);
  }

  /**
   * Continues after the handler's result settled, in the request's context.
   *
   * @param conn The connection.
   * @param value The handler's value, or its error when `failed`.
   * @param failed True when the handler threw or its promise rejected.
   */
  settled(conn: Connection, value: unknown, failed: boolean): void {
    resumeContext(
      conn.values(),
      true,
      () => failed ? this.#failed(conn, value) : this.#value(conn, value),
    );
  }

  /**
   * The handler's value: an async iterator to send (server stream, bidi), or a client stream's
   * result to send as the last message.
   */
  #value(conn: Connection, value: unknown): void {
    let next: Promise<unknown> | undefined;
    try {
      const ctx = conn.ctx;
      if (this.#mode !== "client-stream") {
        if (isAsyncIterable(value)) next = this.#iterate(value, ctx);
      } else if (value !== undefined && !ctx.signal.aborted) {
        next = ctx.sendValidated(value, this.#result);
      }
    } catch (error) {
      return this.#failed(conn, error);
    }
    if (next === undefined) this.#ended(conn);
    else next.then(() => this.#ended(conn), (error) => this.#failed(conn, error));
  }

  /** The handler (or what it returned) failed: report it to the client unless it left. */
  #failed(conn: Connection, error: unknown): void {
    try {
      const signal = conn.ctx.signal;
      if (signal.aborted && (error === signal.reason || (error as Error)?.name === "AbortError")) {
        // the client left: the handler stopped quietly
      } else {
        const { body } = reportError(error, this.#app.logger, this.#label);
        if (!signal.aborted) conn.fail(body);
      }
    } finally {
      this.#ended(conn);
    }
  }

  /** The handler is done: close the connection, dispose the scope, then mark it done. */
  #ended(conn: Connection): void {
    const finished = () => conn.finished();
    this.#close(conn).then(finished, finished);
  }

  async #close(conn: Connection): Promise<void> {
    conn.end();
    const closed = await conn.closed;
    endStreamSpan(conn.store, conn.ctx, closed);
    if (conn.scope !== undefined) await this.#dispose(conn.scope);
    this.#live.delete(conn);
  }

  async #iterate(result: AsyncIterable<unknown>, ctx: StreamRequestContext): Promise<undefined> {
    const iterator = result[Symbol.asyncIterator]();
    const aborted = abortPromise(ctx.signal);
    let finished = false;
    try {
      for (;;) {
        const step = await Promise.race([iterator.next(), aborted.promise]);
        if (step === ABORTED || step.done) {
          finished = step !== ABORTED;
          break;
        }
        await ctx.send(step.value);
      }
    } finally {
      aborted.dispose();
      if (!finished) {
        Promise.resolve(iterator.return?.()).catch((error) =>
          this.#app.logger.error(`Failed to stop the iterator of ${this.#label}`, { error })
        );
      }
    }
    if (ctx.signal.aborted) throw ctx.signal.reason;
    return undefined;
  }

  /** The options of this endpoint's channels: one object, so they share its resolved settings. */
  #channelOptions(): WebSocketChannelOptions {
    const o = this.#options;
    return {
      inbound: this.#inbound ?? this.#body,
      label: this.#label,
      maxMessageBytes: o.maxMessageBytes,
      maxQueuedMessages: o.maxQueuedMessages,
      idleTimeoutMs: o.idleTimeoutMs,
      highWaterMark: o.wsHighWaterMark,
      clock: this.#app.clock,
    };
  }

  async #dispose(scope: Scope): Promise<void> {
    try {
      await scope.dispose();
    } catch (error) {
      this.#app.logger.error(`Failed to dispose the request scope of ${this.#label}`, { error });
    }
  }

  #fail(error: unknown): Response {
    return errorResponse(error, this.#app.logger, this.#label);
  }
}

/**
 * Compiles a stream endpoint (mode `server-stream`, `client-stream` or `bidi`) into a route
 * handler. `compileEndpoint()` calls it for stream definitions.
 *
 * @param def An endpoint whose `.body()` or `.returns()` is a `Stream()`.
 * @param options Method (must be GET), route, application context and stream settings.
 * @returns The route handler.
 * @throws {TypeError} At start-up: for a method other than GET, a schema that cannot be compiled,
 *   or an invalid stream option (named).
 */
export function compileStreamEndpoint(
  def: EndpointDefinition,
  options: CompileEndpointOptions,
): RouteHandler {
  if (def.mode === "unary") {
    throw new TypeError(
      `Cannot compile route "${options.method} ${options.route}": not a stream endpoint`,
    );
  }
  const compiled = new CompiledStream(def, options);
  const policies = hasPolicies(def.meta)
    ? new RoutePolicies(def.meta, `${options.method} ${options.route}`, options.app, true)
    : undefined;
  const handler: RouteHandler = policies === undefined
    ? (req, params, info) => compiled.run(req, params, info)
    : (req, params, info) => policies.run(req, params, info, compiled);
  safeHandlers.add(handler);
  // Without policies that await, the endpoint opens its own async scope where it needs one.
  if (policies === undefined || policies.sync) syncHandlers.add(handler);
  if (policies?.cors !== undefined) preflights.set(handler, policies.cors);
  return handler;
}

streamCompiler.install(compileStreamEndpoint);
