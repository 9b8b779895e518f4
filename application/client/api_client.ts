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

/**
 * A call of one HTTP method on the routes of `R` that take it: the path picks the route, whose
 * definition types the options and the result.
 */
export type MethodCall<R, M extends HttpMethod> = <P extends RoutePath<R, M>>(
  path: P,
  ...options: OptionsArg<CallOptions<RouteDef<R, M, P>, P>>
) => Promise<ApiResult<RouteDef<R, M, P>>>;

/** The client of a route map `R` (the `ApiRoutes` type `generate` writes). */
export interface ApiClient<R> {
  /** `GET` a route. */
  get: MethodCall<R, "GET">;
  /** `POST` to a route. */
  post: MethodCall<R, "POST">;
  /** `PUT` a route. */
  put: MethodCall<R, "PUT">;
  /** `PATCH` a route. */
  patch: MethodCall<R, "PATCH">;
  /** `DELETE` a route. */
  delete: MethodCall<R, "DELETE">;
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
  try {
    // Deno takes headers here; a browser rejects the object (it sends cookies, not headers)
    return new WebSocket(url, { headers } as unknown as string[]);
  } catch {
    return new WebSocket(url);
  }
}

async function read(res: Response, method: string): Promise<unknown> {
  if (res.status === 204 || res.status === 205 || res.status === 304 || method === "HEAD") return;
  if (res.headers.get("content-type")?.includes("json")) return res.json();
  return (await res.text()) || undefined;
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
  const base = String(baseUrl).replace(/\/+$/, "");
  const send: FetchLike = options.fetch ?? ((url, init) => fetch(url, init));
  const url = (path: string, o: AnyOptions) =>
    base + fillPath(path, o.params) + queryString(o.query);
  const defaults: Record<string, string> = {};
  for (const k in options.headers) defaults[k.toLowerCase()] = options.headers[k];
  const plain = Object.keys(defaults).length === 0;
  /** The request headers: defaults, `accept`, the token (when there is one), then the call's. */
  const headers = async (accept: string, given?: HeadersInit): Promise<Record<string, string>> => {
    const h: Record<string, string> = { ...defaults, accept };
    if (options.token) {
      const token = await options.token();
      if (token) h.authorization = token;
    }
    if (given) new Headers(given).forEach((v, k) => h[k] = v);
    return h;
  };
  const call = (method: HttpMethod) => async (path: string, o: AnyOptions = {}) => {
    // no token and no headers of the call: no promise to wait for
    const h = options.token || o.headers
      ? await headers("application/json", o.headers)
      : plain
      ? { accept: "application/json" }
      : { ...defaults, accept: "application/json" };
    let body: string | undefined;
    if (o.body !== undefined) {
      body = JSON.stringify(o.body);
      h["content-type"] = "application/json";
    }
    // GET is fetch's default: leaving it out spares the Request its method normalisation
    const init: RequestInit = method === "GET" ? { headers: h } : { method, headers: h };
    if (body !== undefined) init.body = body;
    if (o.signal !== undefined) init.signal = o.signal;
    if (o.redirect !== undefined) init.redirect = o.redirect;
    const res = await send(url(path, o), init);
    const value = await read(res, method);
    const { status } = res;
    return status < 400
      ? { ok: true, status, data: value, headers: res.headers }
      : { ok: false, status, error: value, headers: res.headers };
  };
  return {
    get: call("GET"),
    post: call("POST"),
    put: call("PUT"),
    patch: call("PATCH"),
    delete: call("DELETE"),
    stream(route: string, o: AnyOptions = {}) {
      const path = route.replace(/^GET /, "");
      const target = url(path, o);
      return sseStream(async (lastEventId) => {
        const h = await headers("text/event-stream", o.headers);
        if (lastEventId !== undefined) h["last-event-id"] = lastEventId;
        return send(target, { headers: h, signal: o.signal });
      }, {
        label: `GET ${path}`,
        lastEventId: o.lastEventId,
        retries: o.retries ?? 3,
        retryDelayMs: o.retryDelayMs ?? 1000,
        signal: o.signal,
        onOpen: o.onOpen,
      });
    },
    connect(route: string, o: AnyOptions = {}) {
      const path = route.replace(/^GET /, "");
      const target = url(path, o).replace(/^http/, "ws");
      const open = options.webSocket ?? defaultSocket;
      const created = Promise.resolve(options.token?.()).then((token) => {
        const h: Record<string, string> = { ...options.headers };
        if (token) h.authorization = token;
        return open(target, h);
      });
      return apiSocket(created, `GET ${path}`, o.signal);
    },
  } as unknown as ApiClient<R>;
}
