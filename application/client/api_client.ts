/**
 * `apiClient<ApiRoutes>(baseUrl)`: calls the routes of an fw API with the types of their
 * definitions. Unary calls resolve to a result discriminated by `status`; `stream()` reads a
 * server stream over Server-Sent Events; `connect()` opens a stream endpoint over a WebSocket.
 * Browser-safe: it uses `fetch`, `WebSocket` and web streams only.
 *
 * @module
 */

import { fillPath, queryString } from "./_url.ts";
import { type ApiEventStream, sseStream } from "./sse_stream.ts";
import { type ApiSocket, apiSocket } from "./socket.ts";
import type {
  ApiResult,
  BaseCallOptions,
  CallOptions,
  ConnectKey,
  ConnectOptions,
  HttpMethod,
  OptionsArg,
  PathOfKey,
  RouteDef,
  RoutePath,
  SocketInput,
  StreamExtras,
  StreamKey,
  StreamMessage,
  StreamOptions,
} from "./types.ts";

/** The `fetch` the client calls: `globalThis.fetch`, or `(url, init) => app.request(url, init)`. */
export type FetchLike = (url: string, init: RequestInit) => Promise<Response>;

/** Options of {@linkcode apiClient}. */
export interface ApiClientOptions {
  /**
   * Returns the `Authorization` header value (`"Bearer <jwt>"`), called before every request so a
   * refreshed token is used; `undefined` sends none.
   */
  token?: () => Promise<string | undefined> | string | undefined;
  /** Headers sent with every request. */
  headers?: Record<string, string>;
  /** The transport (default `globalThis.fetch`); `app.request` serves tests without a socket. */
  fetch?: FetchLike;
  /**
   * Opens WebSockets (default `new WebSocket(url)`, with the headers where the runtime takes them,
   * as Deno does; browsers send cookies instead).
   */
  webSocket?: (url: string, headers: Record<string, string>) => WebSocket;
}

/** The client of a route map `R` (the `ApiRoutes` type `generate` writes). */
export interface ApiClient<R> {
  /** `GET` a route. */
  get<P extends RoutePath<R, "GET">>(
    path: P,
    ...options: OptionsArg<CallOptions<RouteDef<R, "GET", P>, P>>
  ): Promise<ApiResult<RouteDef<R, "GET", P>>>;
  /** `POST` to a route. */
  post<P extends RoutePath<R, "POST">>(
    path: P,
    ...options: OptionsArg<CallOptions<RouteDef<R, "POST", P>, P>>
  ): Promise<ApiResult<RouteDef<R, "POST", P>>>;
  /** `PUT` a route. */
  put<P extends RoutePath<R, "PUT">>(
    path: P,
    ...options: OptionsArg<CallOptions<RouteDef<R, "PUT", P>, P>>
  ): Promise<ApiResult<RouteDef<R, "PUT", P>>>;
  /** `PATCH` a route. */
  patch<P extends RoutePath<R, "PATCH">>(
    path: P,
    ...options: OptionsArg<CallOptions<RouteDef<R, "PATCH", P>, P>>
  ): Promise<ApiResult<RouteDef<R, "PATCH", P>>>;
  /** `DELETE` a route. */
  delete<P extends RoutePath<R, "DELETE">>(
    path: P,
    ...options: OptionsArg<CallOptions<RouteDef<R, "DELETE", P>, P>>
  ): Promise<ApiResult<RouteDef<R, "DELETE", P>>>;
  /**
   * Reads a server-stream route over Server-Sent Events: an async iterable of its messages, which
   * reconnects with `Last-Event-ID` after a dropped connection when the server sends ids.
   */
  stream<K extends StreamKey<R>>(
    route: K,
    ...options: OptionsArg<StreamOptions<RouteDef<R, "GET", PathOfKey<K>>, PathOfKey<K>>>
  ): ApiEventStream<StreamMessage<RouteDef<R, "GET", PathOfKey<K>>>>;
  /** Opens a stream route over a WebSocket: typed `send()` and typed incoming messages. */
  connect<K extends ConnectKey<R>>(
    route: K,
    ...options: OptionsArg<ConnectOptions<RouteDef<R, "GET", PathOfKey<K>>, PathOfKey<K>>>
  ): ApiSocket<
    SocketInput<RouteDef<R, "GET", PathOfKey<K>>>,
    StreamMessage<RouteDef<R, "GET", PathOfKey<K>>>
  >;
}

interface AnyOptions extends BaseCallOptions, StreamExtras {
  params?: Record<string, unknown>;
  query?: Record<string, unknown>;
  body?: unknown;
}

function defaultSocket(url: string, headers: Record<string, string>): WebSocket {
  if (Object.keys(headers).length) {
    try {
      // Deno takes headers here; browsers reject the object (they cannot send headers)
      return new WebSocket(url, { headers } as unknown as string[]);
    } catch {
      // a browser: cookies only
    }
  }
  return new WebSocket(url);
}

const NO_BODY = new Set([204, 205, 304]);

async function read(res: Response, method: string): Promise<unknown> {
  if (NO_BODY.has(res.status) || method === "HEAD") return undefined;
  const type = res.headers.get("content-type") ?? "";
  if (type.includes("json")) return res.json();
  const text = await res.text();
  return text === "" ? undefined : text;
}

class Client {
  readonly #base: string;
  readonly #options: ApiClientOptions;
  readonly #fetch: FetchLike;

  constructor(baseUrl: string | URL, options: ApiClientOptions) {
    this.#base = String(baseUrl).replace(/\/+$/, "");
    this.#options = options;
    this.#fetch = options.fetch ?? ((url, init) => fetch(url, init));
  }

  async #headers(given: HeadersInit | undefined, accept: string): Promise<Headers> {
    const headers = new Headers(this.#options.headers);
    headers.set("accept", accept);
    if (this.#options.token) {
      const value = await this.#options.token();
      if (value) headers.set("authorization", value);
    }
    if (given) new Headers(given).forEach((v, k) => headers.set(k, v));
    return headers;
  }

  async call(method: HttpMethod, path: string, options: AnyOptions = {}): Promise<unknown> {
    const url = this.#base + fillPath(path, options.params) + queryString(options.query);
    const headers = await this.#headers(options.headers, "application/json");
    let body: string | undefined;
    if (options.body !== undefined) {
      body = JSON.stringify(options.body);
      headers.set("content-type", "application/json");
    }
    const res = await this.#fetch(url, {
      method,
      headers,
      body,
      signal: options.signal,
      redirect: options.redirect,
    });
    const value = await read(res, method);
    return res.ok || (res.status >= 300 && res.status < 400)
      ? { ok: true, status: res.status, data: value, headers: res.headers }
      : { ok: false, status: res.status, error: value, headers: res.headers };
  }

  stream(route: string, options: AnyOptions = {}): ApiEventStream<unknown> {
    const path = route.replace(/^GET /, "");
    const url = this.#base + fillPath(path, options.params) + queryString(options.query);
    return sseStream(
      (lastEventId) =>
        this.#headers(options.headers, "text/event-stream").then((headers) => {
          if (lastEventId !== undefined) headers.set("last-event-id", lastEventId);
          return this.#fetch(url, { headers, signal: options.signal });
        }),
      {
        label: `GET ${path}`,
        lastEventId: options.lastEventId,
        retries: options.retries ?? 3,
        retryDelayMs: options.retryDelayMs ?? 1000,
        signal: options.signal,
      },
    );
  }

  connect(route: string, options: AnyOptions = {}): ApiSocket<unknown, unknown> {
    const path = route.replace(/^GET /, "");
    const url = (this.#base + fillPath(path, options.params) + queryString(options.query))
      .replace(/^http/, "ws");
    const headers: Record<string, string> = { ...this.#options.headers };
    const open = this.#options.webSocket ?? defaultSocket;
    const token = this.#options.token?.();
    // a token that is already known opens the socket at once; a promised one first settles
    if (token === undefined || typeof token === "string") {
      if (token) headers.authorization = token;
      return apiSocket(open(url, headers), `GET ${path}`, options.signal);
    }
    return deferredSocket(token.then((t) => {
      if (t) headers.authorization = t;
      return apiSocket(open(url, headers), `GET ${path}`, options.signal);
    }));
  }
}

function deferredSocket(ready: Promise<ApiSocket<unknown, unknown>>): ApiSocket<unknown, unknown> {
  const pending: ((s: ApiSocket<unknown, unknown>) => void)[] = [];
  let socket: ApiSocket<unknown, unknown> | undefined;
  const opened = ready.then((s) => {
    socket = s;
    for (const write of pending.splice(0)) write(s);
    return s.opened;
  });
  opened.catch(() => {});
  return {
    get socket(): WebSocket {
      if (!socket) throw new Error("The socket is not created yet: await opened first");
      return socket.socket;
    },
    opened,
    send: (message) => socket ? socket.send(message) : void pending.push((s) => s.send(message)),
    end: () => socket ? socket.end() : void pending.push((s) => s.end()),
    close: (code, reason) => void ready.then((s) => s.close(code, reason)),
    async *[Symbol.asyncIterator]() {
      yield* await ready;
    },
  };
}

/**
 * Creates a typed client of an fw API.
 *
 * `R` is the route map `generate` writes to `.gen/api.gen.ts` as `ApiRoutes` (routes added with
 * `api().route()` join it with `RouteEntry`). Paths, params, query and body are checked against
 * each route's definition; a call resolves to a union discriminated by `status` (and `ok`): the
 * `.returns()` status with its data, each `.response()`, each `.mayThrow()` / `.throws()` status
 * with its error body, and 400 with the validation body. Any status resolves (none throws);
 * network failures reject. Requests send `Accept: application/json` and JSON bodies.
 *
 * @param baseUrl Where the API is served (`https://api.example`, `http://127.0.0.1:8000/v1`).
 * @param options Token, default headers, a custom `fetch` (or `app.request`), a WebSocket factory.
 * @returns The client.
 * @throws {TypeError} From a call, when a path parameter has no value.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { api, application, endpoint, Int } from "@fw/application";
 * import { apiClient, type RouteEntry } from "@fw/application/client";
 *
 * const getUser = endpoint().params({ id: Int }).returns({ id: Int }).mayThrow("NotFound")
 *   .handle((ctx) => ({ id: ctx.params.id }));
 * const app = application().use(api({ autoScan: false }).route("GET", "/users/:id", getUser));
 *
 * type Routes = RouteEntry<"GET", "/users/:id", typeof getUser>;
 * const client = apiClient<Routes>("http://app", { fetch: (url, init) => app.request(url, init) });
 * const res = await client.get("/users/:id", { params: { id: 7 } });
 * if (res.status === 200) assert.equal(res.data.id, 7);
 * else assert.fail(`unexpected ${res.status}`);
 * ```
 */
export function apiClient<R>(baseUrl: string | URL, options: ApiClientOptions = {}): ApiClient<R> {
  const c = new Client(baseUrl, options);
  const method = (m: HttpMethod) => (path: string, o?: AnyOptions) => c.call(m, path, o);
  return {
    get: method("GET"),
    post: method("POST"),
    put: method("PUT"),
    patch: method("PATCH"),
    delete: method("DELETE"),
    stream: (route: string, o?: AnyOptions) => c.stream(route, o),
    connect: (route: string, o?: AnyOptions) => c.connect(route, o),
  } as unknown as ApiClient<R>;
}
