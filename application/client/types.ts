/**
 * Type-level half of the typed client: from a route map (`ApiRoutes`, written by `generate`) to
 * the paths each method accepts, the options of a call and the union of its results. It reads
 * the phantom `"~types"` field of each endpoint definition structurally, so the client imports no
 * server code.
 *
 * @module
 */

/** The methods of unary calls. */
export type HttpMethod = "GET" | "POST" | "PUT" | "PATCH" | "DELETE";

/** The body of every error response except validation failures. */
export interface ApiErrorBody {
  /** The HTTP status. */
  statusCode: number;
  /** What went wrong. */
  message: string;
  /** The status phrase (`"Not Found"`). */
  error: string;
}

/** The body of a 400 validation failure. */
export interface ApiValidationBody {
  /** Every issue's message joined with `"; "`. */
  message: string;
  /** One entry per failed check: the field (`body.email`, `query.limit`) and its message. */
  errors: { field: string; message: string }[];
}

/**
 * One route of a route map, for routes added by hand with `api().route()`:
 * `type Routes = ApiRoutes & RouteEntry<"GET", "/v1/ping", typeof ping>;`.
 */
export type RouteEntry<M extends HttpMethod, P extends string, D> = {
  [K in `${M} ${P}`]: D;
};

/** The inferred types an endpoint definition carries (params, query, body, returns, responses). */
export type TypesOf<D> = D extends { readonly "~types"?: infer T } ? NonNullable<T> : never;

/**
 * One of the types a definition carries (`"params"`, `"query"`, `"body"`, `"returns"`,
 * `"responses"`); `unknown` when absent.
 */
export type DefinitionField<D, K extends string> = TypesOf<D> extends infer T
  ? K extends keyof T ? T[K] : unknown
  : unknown;

/** True when `T` is the type of a `Stream()` schema. */
export type IsStreamType<T> = unknown extends T ? false
  : [T] extends [AsyncIterable<unknown>] ? true
  : false;

/** The message type of a stream type (the type itself when it is not a stream). */
export type ItemOf<T> = T extends AsyncIterable<infer I> ? I : T;
/** True for a definition with no `Stream()` in `.body()` or `.returns()`. */
export type IsUnary<D> = IsStreamType<DefinitionField<D, "body">> extends true ? false
  : IsStreamType<DefinitionField<D, "returns">> extends true ? false
  : true;

/** The paths of the unary routes of a route map for one method. */
export type RoutePath<R, M extends HttpMethod> = {
  [K in keyof R & string]: K extends `${M} ${infer P}` ? IsUnary<R[K]> extends true ? P : never
    : never;
}[keyof R & string];

/** The definition of `"<M> <P>"` in a route map. */
export type RouteDef<R, M extends string, P extends string> = R[`${M} ${P}` & keyof R];

/** The server-stream routes (`Stream()` in `.returns()` only), as `"/path"` or `"GET /path"`. */
export type StreamKey<R> = {
  [K in keyof R & string]: K extends `GET ${infer P}`
    ? IsStreamType<DefinitionField<R[K], "body">> extends true ? never
    : IsStreamType<DefinitionField<R[K], "returns">> extends true ? P | K
    : never
    : never;
}[keyof R & string];

/** Every stream route (any `Stream()`), as `"/path"` or `"GET /path"`: what `connect()` opens. */
export type ConnectKey<R> = {
  [K in keyof R & string]: K extends `GET ${infer P}` ? IsUnary<R[K]> extends true ? never : P | K
    : never;
}[keyof R & string];

/** The path of a `"/path"` or `"GET /path"` key. */
export type PathOfKey<K extends string> = K extends `GET ${infer P}` ? P : K;

/** The parameter name of one path segment (`:id`, `*rest`), or `never`. */
export type SegmentParam<S extends string> = S extends `:${infer N}` ? N
  : S extends `*${infer N}` ? N
  : never;

/** The parameter names of a path pattern (`:id`, `*rest`). */
export type ParamNames<P extends string> = P extends `${infer A}/${infer B}`
  ? SegmentParam<A> | ParamNames<B>
  : SegmentParam<P>;

/** A value the client can put in a path or a query string. */
export type QueryValue = string | number | boolean | Date;

/** True for a params or query type without a schema (a string index, or `unknown`). */
export type IsUntyped<T> = unknown extends T ? true : string extends keyof T ? true : false;

/** The `params` a call takes: the `.params()` type, or one value per name of the pattern. */
export type ParamsOf<D, P extends string> = IsUntyped<DefinitionField<D, "params">> extends true
  ? { [K in ParamNames<P>]: string | number }
  : DefinitionField<D, "params">;

/** The `params` member of a call's options: required when the pattern has parameters. */
export type ParamsOption<D, P extends string> = [ParamNames<P>] extends [never]
  ? { params?: undefined }
  : { params: ParamsOf<D, P> };

/** The `query` member of a call's options: required when a field of `.query()` is. */
export type QueryOption<D> = IsUntyped<DefinitionField<D, "query">> extends true
  ? { query?: Record<string, QueryValue | readonly QueryValue[] | undefined> }
  : Record<never, never> extends DefinitionField<D, "query">
    ? { query?: DefinitionField<D, "query"> }
  : { query: DefinitionField<D, "query"> };

/** The `body` member of a call's options: the `.body()` type; none without `.body()`. */
export type BodyOption<D> = unknown extends DefinitionField<D, "body"> ? { body?: undefined }
  : undefined extends DefinitionField<D, "body"> ? { body?: DefinitionField<D, "body"> }
  : { body: DefinitionField<D, "body"> };

/** What every call takes besides its typed parts. */
export interface BaseCallOptions {
  /** Extra request headers. */
  headers?: HeadersInit;
  /** Aborts the call. */
  signal?: AbortSignal;
  /** `fetch`'s redirect mode (default `"follow"`; `"manual"` returns the 3xx itself). */
  redirect?: RequestRedirect;
}

/** The options of a call to route `P`: params, query and body as the definition declares them. */
export type CallOptions<D, P extends string> =
  & BaseCallOptions
  & ParamsOption<D, P>
  & QueryOption<D>
  & BodyOption<D>;

/** The options argument: optional when nothing in it is required. */
export type OptionsArg<O> = Record<never, never> extends O ? [options?: O] : [options: O];

/** A response whose status is 2xx or 3xx: `data` holds the body. */
export interface ApiSuccess<S extends number = number, T = unknown> {
  /** True for 2xx and 3xx. */
  readonly ok: true;
  /** The HTTP status. */
  readonly status: S;
  /** The body: parsed JSON, text, or `undefined` when there is none. */
  readonly data: T;
  /** Absent on a success. */
  readonly error?: undefined;
  /** The response headers. */
  readonly headers: Headers;
}

/** A response whose status is 4xx or 5xx: `error` holds the body. */
export interface ApiFailure<S extends number = number, E = unknown> {
  /** False for 4xx and 5xx. */
  readonly ok: false;
  /** The HTTP status. */
  readonly status: S;
  /** Absent on a failure. */
  readonly data?: undefined;
  /** The error body: the envelope, the validation body, or a `.throws()` schema. */
  readonly error: E;
  /** The response headers. */
  readonly headers: Headers;
}

/** True for a 2xx or 3xx status literal. */
export type IsSuccessStatus<S extends number> = `${S}` extends `2${string}` | `3${string}` ? true
  : false;
/** The statuses whose responses have no body. */
export type NoBodyStatus = 204 | 205 | 304;

/** The result of one declared response: `ApiSuccess` for 2xx and 3xx, else `ApiFailure`. */
export type ResultOf<O> = O extends
  { readonly status: infer S extends number; readonly body: infer T }
  ? number extends S ? ApiSuccess<number, unknown> | ApiFailure<number, unknown>
  : IsSuccessStatus<S> extends true ? ApiSuccess<S, S extends NoBodyStatus ? undefined : T>
  : ApiFailure<S, T>
  : never;

/**
 * The result of a call: a union discriminated by `status` (and `ok`) of the primary response,
 * every `.response()`, every documented error with its body, and the 400 and 500 every route can
 * answer. A definition without declared responses gives `ApiSuccess | ApiFailure` of any status.
 */
export type ApiResult<D> = unknown extends DefinitionField<D, "responses">
  ? ApiSuccess<number, unknown> | ApiFailure<number, unknown>
  :
    | ResultOf<DefinitionField<D, "responses">>
    | ApiFailure<400, ApiValidationBody>
    | ApiFailure<500, ApiErrorBody>;

/** The message type a stream route sends. */
export type StreamMessage<D> = ItemOf<DefinitionField<D, "returns">>;
/** The message type a stream route receives over a WebSocket (the body, or its stream's item). */
export type SocketInput<D> = ItemOf<DefinitionField<D, "body">>;

/** What `stream()` takes besides params and query. */
export interface StreamExtras extends BaseCallOptions {
  /** Resume after this event id (sent as `Last-Event-ID`). */
  lastEventId?: string;
  /** Reconnections after a dropped connection when the server sends ids (default 3; 0 = none). */
  retries?: number;
  /** Wait before reconnecting, unless the server sent `retry:` (default 1000 ms). */
  retryDelayMs?: number;
  /** Called each time the stream opens (and after each reconnection). */
  onOpen?: () => void;
}

/** The options of `stream()`: params and query as the definition declares them. */
export type StreamOptions<D, P extends string> = StreamExtras & ParamsOption<D, P> & QueryOption<D>;

/** What `connect()` takes besides params and query. */
export interface ConnectExtras {
  /** Closes the socket when aborted. */
  signal?: AbortSignal;
}

/** The options of `connect()`: params and query as the definition declares them. */
export type ConnectOptions<D, P extends string> =
  & ConnectExtras
  & ParamsOption<D, P>
  & QueryOption<D>;
