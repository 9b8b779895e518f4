/**
 * `@fw/runtime`: what the HTTP and the events halves of fw share.
 *
 * - The schema vocabulary of spec 2.2 (`Uuid`, `Email`, `Int`, `Min`, `Optional`, `ArrayOf`,
 *   `schema`...), with `String`, `Number` and `Boolean` (the global constructors) as primitives.
 * - The schema compiler (`compile(schema, area)`): a validator generated once per schema, with
 *   coercion for `params` and `query` and strict JSON types elsewhere.
 * - Exceptions (`HttpException` and its subclasses, `ValidationException`, `toErrorResponse`) and
 *   the error-code catalogue (`ERROR_CODES`, `statusText`).
 * - The async context (`runInContext`, `useContext`, `tryContext`) and dependency injection
 *   (`provider`, `Container`, `Scope`).
 * - A structured logger (`createLogger`, `consoleSink`, `MemorySink`).
 * - File discovery and the static `.gen/` loaders (`listFiles`, `renderLoader`, `loadModules`).
 * - The plugin interface applications are composed from (`Plugin`, `AppContext`).
 * - Time as a dependency (`Clock`, `systemClock`, `ManualClock` for tests).
 * - A minimal metrics interface (`Meter`, `MemoryMeter`, `noopMeter`).
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

export { type Clock, ManualClock, systemClock, type TimerHandle } from "./clock.ts";
export { type AuthUser, runInContext, tryContext, useContext } from "./context.ts";
export {
  Container,
  isProvider,
  type Lifetime,
  type Provider,
  provider,
  type ProviderImpl,
  type ProviderMap,
  type ProviderOptions,
  type Resolved,
  Scope,
  type ScopeState,
} from "./di.ts";
export { ERROR_CODES, type ErrorCode, isErrorCode, statusText } from "./error_codes.ts";
export {
  BadGatewayException,
  BadRequestException,
  ConflictException,
  type ErrorBody,
  type ErrorResponseParts,
  ForbiddenException,
  GatewayTimeoutException,
  GoneException,
  HttpException,
  type HttpExceptionClass,
  type HttpExceptionOptions,
  InternalServerErrorException,
  MethodNotAllowedException,
  NotAcceptableException,
  NotFoundException,
  NotImplementedException,
  PayloadTooLargeException,
  PreconditionFailedException,
  RequestTimeoutException,
  ServiceUnavailableException,
  toErrorResponse,
  TooManyRequestsException,
  UnauthorizedException,
  UnprocessableEntityException,
  UnsupportedMediaTypeException,
  type ValidationErrorBody,
  ValidationException,
  type ValidationIssue,
} from "./exceptions.ts";
export {
  consoleSink,
  type ConsoleSinkOptions,
  createLogger,
  formatLogLine,
  type Logger,
  type LoggerOptions,
  type LogLevel,
  type LogRecord,
  type LogSink,
  MemorySink,
} from "./logger.ts";
export { type JsonSchemaObject, type JsonSchemaOptions, toJsonSchema } from "./json_schema.ts";
export {
  compile,
  type InputArea,
  joinMessages,
  type ValidationResult,
  type Validator,
} from "./validator.ts";
export type {
  AppContext,
  HttpSettings,
  Middleware,
  Plugin,
  RequestInfo,
  RouteHandler,
  RouteRegistration,
  ServerInfo,
} from "./plugin.ts";
export {
  type Counter,
  type Histogram,
  type InstrumentOptions,
  type Measurement,
  MemoryMeter,
  type Meter,
  type MetricAttributes,
  noopMeter,
} from "./metrics.ts";
export {
  ArrayOf,
  DateIso,
  Desc,
  type Described,
  Email,
  Int,
  Max,
  MaxLength,
  Min,
  MinLength,
  type NumericBase,
  Optional,
  Pattern,
  schema,
  Stream,
  type StringBase,
  toSchemaNode,
  Url,
  Uuid,
} from "./schema.ts";
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
export {
  importFiles,
  listFiles,
  type LoaderManifest,
  loadModules,
  type ModuleMap,
  renderLoader,
} from "./loader.ts";
