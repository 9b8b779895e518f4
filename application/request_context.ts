/**
 * The handler context `ctx`.
 *
 * One {@linkcode RequestContext} is created per request and costs one small object: the URL is
 * kept as the request's string and sliced only when `path()`, `query()` or `host()` ask; no `URL`
 * object is built. Query parameters and the body are parsed only when the endpoint declares a
 * schema for them (validated before the handler) or when the handler asks for them.
 *
 * @module
 */

import {
  type AppContext,
  compile,
  QueryString,
  type RequestInfo,
  type Schema,
  type SchemaNode,
  type ServerInfo,
  type Validator,
} from "@fw/runtime";
import { invalidInput } from "./_errors.ts";
import { readJsonBody } from "./body.ts";
import { clientFacts } from "./_proxy.ts";
import { urlOf } from "./_dispatch.ts";
import type { MediaType } from "./content_negotiation.ts";

/** Path parameters of a route without a `.params()` schema (already percent-decoded). */
export type RawParams = Record<string, string>;
/** Query parameters of a route without a `.query()` schema (first value of each key). */
export type RawQuery = Record<string, string>;

/** The members of `ctx` shared by standard and stream endpoints. */
export interface BaseContext<P = RawParams, Q = RawQuery> {
  /** The full request URL. */
  readonly url: string;
  /** The raw runtime request. */
  readonly req: Request;
  /** The request headers. */
  readonly headers: Headers;
  /** The matched route pattern, for example `/users/:id`. */
  readonly route: string;
  /** Path parameters; typed, coerced and validated when `.params()` is used. */
  readonly params: P;
  /** The response status; defaults to the `.returns()` status (200). */
  statusCode: number;
  /** The server that received the request. */
  readonly server: ServerInfo;
  /** Query parameters; typed, coerced and validated when `.query()` is used. */
  queryParams(): Q;
  /** True when the request came over HTTPS (or `X-Forwarded-Proto: https` with `trustProxy`). */
  secured(): boolean;
  /** The host with its port, for example `api.example.com:8443`. */
  host(): string;
  /** The host without its port. */
  domain(): string;
  /** The request path (still percent-encoded), for example `/users/7`. */
  path(): string;
  /** The raw query string including the leading `?`, or `""` when there is none. */
  query(): string;
}

/** `ctx` of a standard (unary) endpoint. */
export interface EndpointContext<P = RawParams, Q = RawQuery, B = unknown>
  extends BaseContext<P, Q> {
  /**
   * The request body. With `.body()` it was read, parsed and validated before the handler ran;
   * without, it is read as JSON on first call (same limits: 415, 413, 400).
   */
  body(): Promise<B>;
}

/** Per-endpoint facts shared by every request of that endpoint (built once at warmup). */
export interface ContextShared {
  /** The route pattern. */
  readonly route: string;
  /** The application. */
  readonly app: AppContext;
  /** The initial `ctx.statusCode`. */
  readonly status: number;
}

/**
 * The implementation of {@linkcode EndpointContext}. Internal: handlers see the interface.
 */
export class RequestContext<P = RawParams, Q = RawQuery, B = unknown>
  implements EndpointContext<P, Q, B> {
  /** The raw request. */
  readonly req: Request;
  /** Path parameters (validated ones replace the raw ones before the handler runs). */
  params: P;
  /** The response status. */
  statusCode: number;
  /** Validated query parameters, set before the handler when `.query()` is used. */
  _query: Q | undefined = undefined;
  /** The validated body, set before the handler when `.body()` is used. */
  _bodyValue: B | undefined = undefined;
  /** True once `_bodyValue` holds the validated body. */
  _bodyReady = false;
  /** The negotiated response type, when it was chosen before the handler ran. */
  _media: MediaType | undefined = undefined;
  #body: Promise<B> | undefined = undefined;
  #info: RequestInfo;
  #shared: ContextShared;
  #url: string | undefined = undefined;
  #pathStart = -1;
  #pathEnd = -1;
  #queryEnd = -1;

  /**
   * @param req The request.
   * @param params Raw path parameters from the router.
   * @param info Connection facts.
   * @param shared Per-endpoint facts.
   */
  constructor(req: Request, params: RawParams, info: RequestInfo, shared: ContextShared) {
    this.req = req;
    this.params = params as P;
    this.#info = info;
    this.#shared = shared;
    this.statusCode = shared.status;
  }

  /** The full request URL. */
  get url(): string {
    return this.#url ??= urlOf(this.req);
  }

  /** The request headers. */
  get headers(): Headers {
    return this.req.headers;
  }

  /** The matched route pattern. */
  get route(): string {
    return this.#shared.route;
  }

  /** The server that received the request. */
  get server(): ServerInfo {
    return this.#info.server;
  }

  /**
   * The connection facts. A stream endpoint replaces those of a WebSocket once upgraded (see
   * `application/streams/compile_stream.ts`).
   */
  get _info(): RequestInfo {
    return this.#info;
  }
  set _info(info: RequestInfo) {
    this.#info = info;
  }

  #locate(): void {
    const url = this.url;
    const scheme = url.indexOf("://");
    let start = url.indexOf("/", scheme < 0 ? 0 : scheme + 3);
    if (start < 0) start = url.length;
    let hash = url.indexOf("#", start);
    if (hash < 0) hash = url.length;
    let question = url.indexOf("?", start);
    if (question < 0 || question > hash) question = hash;
    this.#pathStart = start;
    this.#pathEnd = question;
    this.#queryEnd = hash;
  }

  /** The request path, percent-encoded. */
  path(): string {
    if (this.#pathStart < 0) this.#locate();
    return this.url.slice(this.#pathStart, this.#pathEnd);
  }

  /** The raw query string with its `?`, or `""`. */
  query(): string {
    if (this.#pathStart < 0) this.#locate();
    return this.#queryEnd - this.#pathEnd > 1 ? this.url.slice(this.#pathEnd, this.#queryEnd) : "";
  }

  /** The query string parsed (internal: what the query validator reads). */
  searchParams(): QueryString {
    return new QueryString(this.query());
  }

  /** Validated query parameters, or the raw ones (first value of each key). */
  queryParams(): Q {
    if (this._query !== undefined) return this._query;
    const raw: RawQuery = Object.create(null);
    for (const [key, value] of this.searchParams()) if (!(key in raw)) raw[key] = value;
    return this._query = raw as Q;
  }

  /** The body: validated when `.body()` is used, else read as JSON on first call. */
  body(): Promise<B> {
    return this.#body ??= this._bodyReady ? Promise.resolve(this._bodyValue as B) : readJsonBody(
      this.req,
      this.#shared.app.http.maxBodyBytes,
      this.#shared.app.http.bodyTimeoutMs,
    ) as Promise<B>;
  }

  /** True for HTTPS (or a trusted `X-Forwarded-Proto: https`). */
  secured(): boolean {
    if (this.url.startsWith("https:")) return true;
    return this.#shared.app.http.trustProxy &&
      clientFacts(this.req, this.#info, this.#shared.app.http).proto === "https";
  }

  /** The host and port (a trusted `X-Forwarded-Host` wins). */
  host(): string {
    if (this.#shared.app.http.trustProxy) {
      const forwarded = clientFacts(this.req, this.#info, this.#shared.app.http).host;
      if (forwarded) return forwarded;
    }
    if (this.#pathStart < 0) this.#locate();
    const url = this.url;
    const scheme = url.indexOf("://");
    const authority = url.slice(scheme < 0 ? 0 : scheme + 3, this.#pathStart);
    const at = authority.lastIndexOf("@");
    return at < 0 ? authority : authority.slice(at + 1);
  }

  /** The host without the port (IPv6 addresses keep their brackets). */
  domain(): string {
    const host = this.host();
    if (host.startsWith("[")) return host.slice(0, host.indexOf("]") + 1);
    const colon = host.lastIndexOf(":");
    return colon < 0 ? host : host.slice(0, colon);
  }
}

/**
 * Compiles the validator of one input area of a route, once, at start-up.
 *
 * @param node The schema, or `undefined` when the route declares none.
 * @param area Which input it checks (coercion for params and query, strict JSON otherwise).
 * @param label The route (`GET /users/:id`), named in the error.
 * @returns The validator, or `undefined` without a schema.
 * @throws {TypeError} When the schema cannot be compiled.
 */
export function inputValidator(
  node: SchemaNode | undefined,
  area: "params" | "query" | "body" | "message",
  label: string,
): Validator<unknown> | undefined {
  if (node === undefined) return undefined;
  try {
    return compile({ node } as Schema<unknown>, area) as Validator<unknown>;
  } catch (error) {
    throw new TypeError(`Cannot compile route "${label}": ${(error as Error).message}`, {
      cause: error,
    });
  }
}

/**
 * Validates the path parameters and the query string of a request into its context (coerced
 * values replace the raw ones), for endpoints and stream endpoints alike.
 *
 * @param ctx The request's context.
 * @param params The route's params validator, if any.
 * @param query The route's query validator, if any.
 * @returns The 400 `{message, errors}` response when either is invalid, else `undefined`.
 */
export function validateParamsAndQuery(
  ctx: RequestContext,
  params: Validator<unknown> | undefined,
  query: Validator<unknown> | undefined,
): Response | undefined {
  if (params !== undefined) {
    const r = params(ctx.params);
    if (!r.ok) return invalidInput(r.errors);
    ctx.params = r.value as RawParams;
  }
  if (query !== undefined) {
    const r = query(ctx.searchParams());
    if (!r.ok) return invalidInput(r.errors);
    ctx._query = r.value as RawQuery;
  }
  return undefined;
}
