/**
 * `@fw/runtime`: what the HTTP and the events halves of fw share.
 *
 * - The schema vocabulary (`Uuid`, `Email`, `Int`, `Min`, `Optional`, `ArrayOf`,
 *   `schema`...), with `String`, `Number` and `Boolean` (the global constructors) as primitives.
 * - The schema compiler (`compile(schema, area)`): a validator generated once per schema, with
 *   coercion for `params` and `query` and strict JSON types elsewhere.
 * - Exceptions: `HttpException`, its 4xx and 5xx subclasses (`NotFoundException`...),
 *   `ValidationException` (the `{message, errors}` body), and `toErrorResponse` (any thrown
 *   value to status, body and headers; non-HTTP errors become a generic 500 that leaks nothing).
 * - The error-code catalogue of `.mayThrow()` (`ERROR_CODES`, `ErrorCode`, `errorCodeOf`,
 *   `errorCodeForStatus`) and the status phrases (`statusText`).
 * - The async context (`runInContext`, `useContext`, `tryContext`, type `AuthUser`): values that
 *   follow a request or event through every `await` and timer.
 * - Dependency injection: `provider()` declares singleton or scoped values with typed
 *   dependencies; `Container` binds and overrides them; a `Scope` per request or invocation
 *   resolves them and disposes them in reverse creation order.
 * - A structured logger (`createLogger`, child loggers, `consoleSink` in text or JSON,
 *   `MemorySink` for tests, an injectable clock).
 * - File discovery and the static `.gen/` loaders (`listFiles`, `renderLoader`, `loadModules`)
 *   in `@fw/runtime/loader`, and `toJsonSchema()` (a schema as JSON Schema, for OpenAPI and
 *   AsyncAPI documents) in `@fw/runtime/json-schema`: their own exports, so that importing this
 *   module does not load them (the routes and handlers of a deployed application come from its
 *   generated loaders, and documents are built on demand).
 * - The plugin interface applications are composed from (`Plugin`, `AppContext`).
 * - Time as a dependency (`Clock`, `systemClock`, `ManualClock` for tests).
 * - A minimal metrics interface (`Meter`, `MemoryMeter`, `noopMeter`).
 * - A minimal tracing interface (`Tracer`, `Span`, `noopTracer`, `currentSpan`, W3C
 *   `traceparent` helpers).
 *
 * @example Exceptions, context, injection and logging together
 * ```ts
 * import assert from "node:assert/strict";
 * import {
 *   Container,
 *   createLogger,
 *   MemorySink,
 *   NotFoundException,
 *   provider,
 *   runInContext,
 *   toErrorResponse,
 *   useContext,
 * } from "@fw/runtime";
 *
 * const sink = new MemorySink();
 * const Log = provider({ name: "Log", factory: () => createLogger({ sink, clock: () => 0 }) });
 * const Users = provider({
 *   name: "Users",
 *   lifetime: "scoped",
 *   inject: { log: Log },
 *   factory: ({ log }) => ({
 *     find(id: number) {
 *       log.info("lookup", { traceId: useContext<{ traceId: string }>().traceId, id });
 *       throw new NotFoundException(`No user ${id}`);
 *     },
 *   }),
 * });
 *
 * const container = new Container();
 * await runInContext({ traceId: "t-1" }, async () => {
 *   await using scope = container.createScope();
 *   const { users } = await scope.resolveAll({ users: Users });
 *   const res = toErrorResponse((() => { try { users.find(7); } catch (e) { return e; } })());
 *   assert.deepEqual(res.body, { statusCode: 404, message: "No user 7", error: "Not Found" });
 * });
 * assert.deepEqual(sink.lines(), ['INFO [t-1] lookup {"id":7}']);
 * ```
 *
 * @example A schema and its static type
 * ```ts
 * import assert from "node:assert/strict";
 * import { ArrayOf, Email, type InferSchema, Int, Min, Optional, schema } from "@fw/runtime";
 *
 * const User = schema("User", { email: Email, age: Optional(Min(0, Int)), tags: ArrayOf(String) });
 * const ada: InferSchema<typeof User> = { email: "ada@example.com", tags: [] };
 * assert.equal(ada.age, undefined);
 * ```
 *
 * @module
 */

// Modules whose every export is public are re-exported whole: V8 resolves each name of a named
// re-export list when the module graph is linked, a few thousand instructions per name at every
// start-up, and a star export only for the names imported. `public_api_test.ts` lists the public
// names, so an export added to one of these modules is a decision, not an accident.
export * from "./clock.ts";
export * from "./context.ts";
export * from "./di.ts";
export * from "./query_string.ts";
export * from "./provider.ts";
export * from "./error_codes.ts";
export * from "./exceptions.ts";
export * from "./client_exceptions.ts";
export * from "./server_exceptions.ts";
export * from "./error_response.ts";
export * from "./logger.ts";
export type { JsonSchemaObject, JsonSchemaOptions } from "./json_schema.ts";
export * from "./validator.ts";
export type {
  AppContext,
  HttpSettings,
  Middleware,
  Plugin,
  RequestInfo,
  RequestObserver,
  RouteHandler,
  RouteRegistration,
  ServerInfo,
} from "./plugin.ts";
export * from "./metrics.ts";
export * from "./tracer.ts";
export * from "./schema.ts";
export type {
  InferSchema,
  InferShape,
  ObjectSchema,
  OptionalKeys,
  OptionalSchema,
  RequiredKeys,
  Schema,
  SchemaFormat,
  SchemaKind,
  SchemaLike,
  SchemaNode,
  SchemaShape,
  Simplify,
  StreamSchema,
} from "./schema_types.ts";
export type { LoaderManifest, LoaderRoute, ModuleMap } from "./loader.ts";
