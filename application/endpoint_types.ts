/**
 * Type-level half of the endpoint builder: the builder interface, the definition it produces, its
 * metadata, the policy options it stores, and the handler types inferred from the schemas.
 *
 * @module
 */

import type {
  AppContext,
  AuthUser,
  ErrorBody,
  ErrorCode,
  ErrorStatuses,
  InferSchema,
  ProviderMap,
  Resolved,
  Schema,
  SchemaLike,
  SchemaNode,
  SchemaShape,
  ValidationErrorBody,
} from "@fw/runtime";
import type { HttpResponse } from "./http_response.ts";
import type { StreamOptions } from "./streams/options.ts";
import type { RateLimitStore } from "./policies/rate_limit_store.ts";
import type { BaseContext, EndpointContext, RawParams, RawQuery } from "./request_context.ts";

/** How an endpoint talks to its client, derived from `.body()` and `.returns()`. */
export type EndpointMode = "unary" | "server-stream" | "client-stream" | "bidi";

/** The schema of `.params()` and `.query()`: a flat object of schemas. */
export type FlatSchema = SchemaShape | Schema<object>;

/** A documented response (`.returns()`, `.response()`, `.throws()`). */
export interface ResponseMeta {
  /** HTTP status. */
  readonly status: number;
  /** Description (OpenAPI). */
  readonly description: string;
  /** Body schema, when there is a body. */
  readonly schema?: SchemaNode;
}

/** The primary response declared with `.returns()`. */
export interface ReturnsMeta {
  /** HTTP status; 200 unless given. */
  readonly status: number;
  /** Description (OpenAPI). */
  readonly description?: string;
  /** Body schema, when there is a body. */
  readonly schema?: SchemaNode;
}

/**
 * `.cors()` options for one route. Preflights answer 204; an origin that is not allowed is never
 * reflected; responses vary on `Origin` unless `origin` is a plain `"*"`.
 */
export interface CorsOptions {
  /** Allowed origin(s): `"*"`, one origin, a list, or a predicate. Default `"*"`. */
  readonly origin?: string | readonly string[] | ((origin: string) => boolean);
  /** Whether cookies and credentials are allowed (`origin: "*"` is then an error). */
  readonly credentials?: boolean;
  /** Request headers allowed in a preflight (default: the headers the preflight asks for). */
  readonly allowHeaders?: readonly string[];
  /** Response headers exposed to the browser. */
  readonly exposeHeaders?: readonly string[];
  /** Preflight cache lifetime in seconds (default 600). */
  readonly maxAge?: number;
}

/**
 * `.rateLimit()` options for one route: at most `max` requests per client in each fixed window
 * of `windowMs`. Over the limit: 429 with `Retry-After`; every response carries `RateLimit-*`.
 */
export interface RateLimitOptions {
  /** Requests allowed per window. */
  readonly max: number;
  /** Window length in milliseconds. */
  readonly windowMs: number;
  /**
   * Where counts live: default an in-memory store per route (one process); a
   * `redisRateLimitStore()` from `@fw/application/redis-rate-limit` shares the limit between
   * instances.
   */
  readonly store?: RateLimitStore;
  /**
   * The client key: default the peer address (`X-Forwarded-For` only with
   * `http({ trustProxy: true })`). Receives the request and that address; the async context
   * (`useContext().user`) is available.
   */
  readonly key?: (req: Request, address: string) => string;
}

/** `.secure()` access rules: every listed scope and role is required. */
export interface SecureOptions {
  /** Required OAuth scopes. */
  readonly scopes?: readonly string[];
  /** Required roles. */
  readonly roles?: readonly string[];
}

/** A custom access check for `.secure(guard)`: `false` answers 403. */
export type Guard = (
  user: AuthUser,
  ctx: BaseContext<unknown, unknown>,
) => boolean | Promise<boolean>;

/** What `.secure()` stores: the rules, or the guard. An empty object requires a login only. */
export interface SecureMeta {
  /** Required scopes (empty when none). */
  readonly scopes: readonly string[];
  /** Required roles (empty when none). */
  readonly roles: readonly string[];
  /** The guard, when `.secure(guard)` was used. */
  readonly guard?: Guard;
}

/** Everything an endpoint declares: read by the router, OpenAPI and the policies. */
export interface EndpointMeta {
  /** Path parameter schema (an object node). */
  readonly params?: SchemaNode;
  /** Query schema (an object node). */
  readonly query?: SchemaNode;
  /** Body schema (`kind: "stream"` for a client stream). */
  readonly body?: SchemaNode;
  /** The primary response. */
  readonly returns?: ReturnsMeta;
  /** Additional documented responses. */
  readonly responses: readonly ResponseMeta[];
  /** Documented framework error codes. */
  readonly mayThrow: readonly ErrorCode[];
  /** Documented custom errors. */
  readonly throws: readonly ResponseMeta[];
  /** Operation description. */
  readonly description?: string;
  /** CORS options. */
  readonly cors?: CorsOptions;
  /** Rate limit. */
  readonly rateLimit?: RateLimitOptions;
  /** Access rules. */
  readonly secure?: SecureMeta;
  /** Injected providers. */
  readonly inject?: ProviderMap;
}

/**
 * One response an endpoint declares, as types only: its status and the type of its body. The
 * builder collects them (`.returns()`, `.response()`, `.mayThrow()`, `.throws()` and the statuses
 * `.body()`, `.secure()` and `.rateLimit()` add) for the typed client of
 * `@fw/application/client`.
 */
export interface Outcome<S extends number = number, T = unknown> {
  /** HTTP status. */
  readonly status: S;
  /** Body type. */
  readonly body: T;
}

/** The primary response (`.returns()`), which a later `.returns()` replaces. */
export interface PrimaryOutcome<S extends number = number, T = unknown> extends Outcome<S, T> {
  /** Marks the primary response. */
  readonly primary: true;
}

/** The responses of a `.mayThrow()` list: each code's status with the error envelope. */
export type MayThrowOutcome<C extends ErrorCode> = C extends "Validation"
  ? Outcome<400, ValidationErrorBody>
  : Outcome<ErrorStatuses[C], ErrorBody>;

/**
 * A finished endpoint: what `.handle()` and `endpoint(fn)` return, and what route files export.
 * The type parameters record the inferred types for tooling; they do not exist at run time. `O`
 * is the union of the declared responses ({@linkcode Outcome}).
 */
export interface EndpointDefinition<
  P = unknown,
  Q = unknown,
  B = unknown,
  R = unknown,
  O = unknown,
> {
  /** Brand checked by `isEndpoint()`. */
  readonly kind: "fw.endpoint";
  /** Standard HTTP or one of the stream modes. */
  readonly mode: EndpointMode;
  /** The declarations. */
  readonly meta: EndpointMeta;
  /** The handler: `(ctx)`, or `(deps, ctx)` when `meta.inject` is set. */
  readonly handler: (...args: never[]) => unknown;
  /** Phantom field carrying the inferred types; never present at run time. */
  readonly "~types"?: { params: P; query: Q; body: B; returns: R; responses: O };
}

/** A value or a promise of it. */
export type MaybePromise<T> = T | Promise<T>;

/**
 * What a standard handler may return when the declared responses have type `R`: a value of that
 * type, or a string, `null`, `undefined`, an `HttpResponse` or a `Response` (loosely checked).
 */
export type HandlerResult<R> = R | string | null | HttpResponse | Response | undefined | void;

/** True when `T` is the type of a `Stream()` schema. */
export type IsStream<T> = unknown extends T ? false : [T] extends [AsyncIterable<unknown>] ? true
: false;

/** The message type of a stream type. */
export type StreamItem<T> = T extends AsyncIterable<infer I> ? I : T;

/** How a stream endpoint is connected: Server-Sent Events or a WebSocket. */
export type StreamTransport = "sse" | "websocket";

/** Options of `ctx.send()`; they apply to Server-Sent Events and are ignored on WebSockets. */
export interface StreamSendOptions {
  /** Event id (`id:`); default the next number after the previous one (or `Last-Event-ID`). */
  readonly id?: string | number;
  /** Event name (`event:`); default none, so the browser fires `message`. */
  readonly event?: string;
}

/**
 * `ctx` of a client-stream or bidirectional endpoint, and the base of the
 * server-stream `ctx`; served by `compileStreamEndpoint()`.
 */
export interface StreamContext<P = RawParams, Q = RawQuery, In = unknown, Out = unknown>
  extends BaseContext<P, Q> {
  /**
   * Sends one message to the peer after validating it against the `Stream()` schema of
   * `.returns()`; settles once the transport has room (back-pressure). After the peer left it
   * rejects with an `AbortError`, which ends the handler quietly.
   */
  send(message: Out, options?: StreamSendOptions): Promise<void>;
  /** Incoming messages, each validated; ends when the peer ends its stream or closes. */
  messages(): AsyncIterable<In>;
  /** Aborted when the connection ends (the client disconnected, or the server is stopping). */
  readonly signal: AbortSignal;
  /** The `Last-Event-ID` request header, so a resumed stream can continue where it stopped. */
  readonly lastEventId: string | undefined;
  /** The transport this connection uses. */
  readonly transport: StreamTransport;
}

/**
 * `ctx` of a server-stream endpoint: `body()` is the one input message (the request body over
 * SSE, the first message over a WebSocket); `messages()` yields nothing.
 */
export interface ServerStreamContext<P = RawParams, Q = RawQuery, B = unknown, Out = unknown>
  extends StreamContext<P, Q, never, Out> {
  /** The validated body (`undefined` without `.body()`). */
  body(): Promise<B>;
}

/** The `ctx` type for the given params, query, body and returns types. */
export type ContextFor<P, Q, B, R> = IsStream<B> extends true
  ? StreamContext<P, Q, StreamItem<B>, StreamItem<R>>
  : IsStream<R> extends true ? ServerStreamContext<P, Q, B, StreamItem<R>>
  : EndpointContext<P, Q, B>;

/**
 * The return type of a handler for the given body and returns types. A server-stream or
 * bidirectional handler may return an async iterable of messages instead of calling `send()`.
 */
export type ResultFor<R, X = never> = IsStream<R> extends true
  ? MaybePromise<void | AsyncIterable<StreamItem<R>>>
  : MaybePromise<HandlerResult<R | X>>;

/**
 * The handler `.handle()` accepts: `(ctx)`, or `(deps, ctx)` after `.inject()`. `X` holds the
 * types of the additional `.response()` bodies, which the handler may also return.
 */
export type EndpointHandler<P, Q, B, R, D extends ProviderMap | undefined, X = never> = D extends
  ProviderMap ? (deps: Resolved<D>, ctx: ContextFor<P, Q, B, R>) => ResultFor<R, X>
  : (ctx: ContextFor<P, Q, B, R>) => ResultFor<R, X>;

/** The handler of `endpoint(fn)` (simple mode). */
export type SimpleHandler = (ctx: EndpointContext) => MaybePromise<unknown>;

/**
 * The builder returned by `endpoint()`. Every method returns a new builder (builders can be
 * shared and extended); `.handle()` finishes the definition and must come last.
 *
 * Type parameters: `P` params, `Q` query, `B` body, `R` primary response, `D` injected providers,
 * `X` the bodies of additional `.response()` entries, `O` every declared response as an
 * {@linkcode Outcome} (for the typed client).
 */
export interface EndpointBuilder<
  P = RawParams,
  Q = RawQuery,
  B = unknown,
  R = unknown,
  D extends ProviderMap | undefined = undefined,
  X = never,
  O = PrimaryOutcome<200, unknown>,
> {
  /** Validates (and coerces) path parameters; `ctx.params` becomes typed. */
  params<S extends FlatSchema>(schema: S): EndpointBuilder<InferSchema<S>, Q, B, R, D, X, O>;
  /** Validates (and coerces) the query string; `ctx.queryParams()` becomes typed. */
  query<S extends FlatSchema>(schema: S): EndpointBuilder<P, InferSchema<S>, B, R, D, X, O>;
  /** Validates the JSON body (`Stream(T)` for a client stream); `await ctx.body()` becomes typed. */
  body<S extends SchemaLike>(
    schema: S,
  ): EndpointBuilder<P, Q, InferSchema<S>, R, D, X, O | Outcome<413 | 415, ErrorBody>>;
  /** Declares the primary response with a status and an optional body schema. */
  returns<N extends number, S extends SchemaLike = SchemaLike>(
    status: N,
    description?: string,
    schema?: S,
  ): EndpointBuilder<
    P,
    Q,
    B,
    SchemaLike extends S ? unknown : InferSchema<S>,
    D,
    X,
    Exclude<O, PrimaryOutcome> | PrimaryOutcome<N, SchemaLike extends S ? unknown : InferSchema<S>>
  >;
  /** Declares the primary response with status 200 (`Stream(T)` for a server stream). */
  returns<S extends SchemaLike>(
    schema: S,
  ): EndpointBuilder<
    P,
    Q,
    B,
    InferSchema<S>,
    D,
    X,
    Exclude<O, PrimaryOutcome> | PrimaryOutcome<200, InferSchema<S>>
  >;
  /** Documents an additional response (and validates it outside production). */
  response<N extends number, S extends SchemaLike = SchemaLike>(
    status: N,
    description: string,
    schema?: S,
  ): EndpointBuilder<
    P,
    Q,
    B,
    R,
    D,
    X | (SchemaLike extends S ? never : InferSchema<S>),
    O | Outcome<N, SchemaLike extends S ? unknown : InferSchema<S>>
  >;
  /** Documents framework error codes (`"NotFound"`, `"Conflict"`...); metadata only. */
  mayThrow<C extends ErrorCode = never>(
    ...codes: C[]
  ): EndpointBuilder<P, Q, B, R, D, X, O | MayThrowOutcome<C>>;
  /** Documents a custom error response; metadata only. */
  throws<N extends number, S extends SchemaLike = SchemaLike>(
    status: N,
    description: string,
    schema?: S,
  ): EndpointBuilder<
    P,
    Q,
    B,
    R,
    D,
    X,
    O | Outcome<N, SchemaLike extends S ? ErrorBody : InferSchema<S>>
  >;
  /** Sets the OpenAPI operation description. */
  description(text: string): EndpointBuilder<P, Q, B, R, D, X, O>;
  /** Enables CORS for this route. */
  cors(options?: CorsOptions): EndpointBuilder<P, Q, B, R, D, X, O>;
  /** Limits requests per window for this route (429 when exceeded). */
  rateLimit(
    options: RateLimitOptions,
  ): EndpointBuilder<P, Q, B, R, D, X, O | Outcome<429, ErrorBody>>;
  /** Requires authentication (401), and the given scopes/roles or guard (403). */
  secure(
    optionsOrGuard?: SecureOptions | Guard,
  ): EndpointBuilder<P, Q, B, R, D, X, O | Outcome<401 | 403, ErrorBody>>;
  /** Injects providers, resolved per request; the handler becomes `(deps, ctx)`. */
  inject<N extends ProviderMap>(providers: N): EndpointBuilder<P, Q, B, R, N, X, O>;
  /** Finishes the definition with its handler. */
  handle(handler: EndpointHandler<P, Q, B, R, D, X>): EndpointDefinition<P, Q, B, R, O>;
}

/** Where an endpoint is mounted. */
export interface CompileEndpointOptions {
  /** HTTP method, upper case. */
  method: string;
  /** The full route pattern (prefix included), for example `/v1/users/:id`. */
  route: string;
  /** The application the endpoint runs in. */
  app: AppContext;
  /** Settings of stream connections (stream endpoints only; `api({ streams })`). */
  streams?: StreamOptions;
}
