/**
 * `@fw/application`: the HTTP and WebSocket half of fw (applications, plugins, file-based routes,
 * the `endpoint()` builder, content negotiation, route policies and the OpenAPI document that
 * `api({ openapi })` serves).
 *
 * A route file needs one import line: the endpoint builder, the response helpers, the schema
 * vocabulary and the exceptions all come from here. Optional parts have their own exports, as in
 * Hono (`hono/jwt`, `hono/cors`), so that an application loads only what it uses at start-up:
 * `@fw/application/oauth` (`oauth()`, `userFromClaims()`), `@fw/application/telemetry`
 * (`telemetry()`), `@fw/application/openapi` (`openApiDocument()`), `@fw/application/rate-limit`
 * (`MemoryRateLimitStore`) and `@fw/application/redis-rate-limit`, `@fw/application/streams`,
 * `@fw/application/compile`, `@fw/application/client`, `@fw/application/testing`.
 *
 * @example A route file
 * ```ts
 * import assert from "node:assert/strict";
 * import { endpoint, Int, NotFoundException, Optional } from "@fw/application";
 *
 * const users = new Map([[1, { id: 1, name: "Ada" }]]);
 *
 * export const GET = endpoint()
 *   .params({ id: Int })
 *   .query({ fields: Optional(String) })
 *   .returns({ id: Int, name: String })
 *   .mayThrow("NotFound")
 *   .handle((ctx) => {
 *     const user = users.get(ctx.params.id);
 *     if (!user) throw new NotFoundException(`User "${ctx.params.id}" not found`);
 *     return user;
 *   });
 *
 * assert.equal(GET.meta.returns?.status, 200);
 * ```
 *
 * @module
 */

export {
  Application,
  application,
  type ApplicationOptions,
  type RouteEntry,
} from "./application.ts";
export { type HealthOptions, http, type HttpOptions, type TrustProxyOption } from "./http.ts";
export { api, type ApiOptions, type ApiPlugin, type ApiRoute, type GlobalThrows } from "./api.ts";
export { type Module, module } from "./module.ts";
export type {
  ApiOpenApiConfig,
  OpenApiDocument,
  OpenApiHeader,
  OpenApiInfo,
  OpenApiMediaType,
  OpenApiOperation,
  OpenApiOptions,
  OpenApiParameter,
  OpenApiRequestBody,
  OpenApiResponse,
  OpenApiRoute,
  OpenApiServer,
  OpenApiStreamExtension,
} from "./openapi/types.ts";
export { endpoint, isEndpoint } from "./endpoint.ts";
export { matchedRoute } from "./_dispatch.ts";
export {
  checkCorsOptions,
  checkRateLimitOptions,
  DEFAULT_CORS_MAX_AGE,
  RATE_LIMIT_HEADERS,
} from "./policies/_options.ts";
export type { RateLimitHit, RateLimitStore } from "./policies/rate_limit_store.ts";
export type { CompileEndpointOptions } from "./endpoint_types.ts";
export type { ResolvedStreamOptions, StreamOptions } from "./streams/options.ts";
export type { SseEventFields, SseSendOptions, SseStreamOptions } from "./streams/sse.ts";
export type { CloseInfo, ErrorEnvelope, WebSocketChannelOptions } from "./streams/websocket.ts";
export type {
  ContextFor,
  CorsOptions,
  EndpointBuilder,
  EndpointDefinition,
  EndpointHandler,
  EndpointMeta,
  EndpointMode,
  FlatSchema,
  Guard,
  HandlerResult,
  IsStream,
  MaybePromise,
  MayThrowOutcome,
  Outcome,
  PrimaryOutcome,
  RateLimitOptions,
  ResponseMeta,
  ResultFor,
  ReturnsMeta,
  SecureMeta,
  SecureOptions,
  ServerStreamContext,
  SimpleHandler,
  StreamContext,
  StreamItem,
  StreamSendOptions,
  StreamTransport,
} from "./endpoint_types.ts";
export type { BaseContext, EndpointContext, RawParams, RawQuery } from "./request_context.ts";
export {
  badRequest,
  forbidden,
  HttpResponse,
  type HttpResponseInit,
  json,
  notFound,
  type RedirectStatus,
  unauthorized,
} from "./http_response.ts";
export { DEFAULT_MAX_BODY_BYTES, isJsonContentType, MAX_BODY_DEPTH, readJsonBody } from "./body.ts";

export {
  ArrayOf,
  DateIso,
  Desc,
  Email,
  Int,
  Max,
  MaxLength,
  Min,
  MinLength,
  Optional,
  Pattern,
  schema,
  Stream,
  Url,
  Uuid,
} from "@fw/runtime";
export type {
  AppContext,
  AuthUser,
  Clock,
  Container,
  Counter,
  Described,
  Histogram,
  HttpSettings,
  InferSchema,
  InferShape,
  InstrumentOptions,
  JsonSchemaObject,
  Lifetime,
  LoaderManifest,
  LoaderRoute,
  Logger,
  LogLevel,
  Meter,
  MetricAttributes,
  Middleware,
  ModuleMap,
  NumericBase,
  ObjectSchema,
  OptionalKeys,
  OptionalSchema,
  Plugin,
  Provider,
  ProviderImpl,
  ProviderMap,
  RequestInfo,
  RequestObserver,
  RequiredKeys,
  Resolved,
  RouteHandler,
  RouteRegistration,
  Schema,
  SchemaFormat,
  SchemaKind,
  SchemaLike,
  SchemaNode,
  SchemaShape,
  Scope,
  ServerInfo,
  Simplify,
  StreamSchema,
  StringBase,
  TimerHandle,
} from "@fw/runtime";
export {
  BadGatewayException,
  BadRequestException,
  ConflictException,
  ForbiddenException,
  GatewayTimeoutException,
  GoneException,
  HttpException,
  InternalServerErrorException,
  MethodNotAllowedException,
  NotAcceptableException,
  NotFoundException,
  NotImplementedException,
  PayloadTooLargeException,
  PreconditionFailedException,
  RequestTimeoutException,
  ServiceUnavailableException,
  TooManyRequestsException,
  UnauthorizedException,
  UnprocessableEntityException,
  UnsupportedMediaTypeException,
  ValidationException,
} from "@fw/runtime";
export type { ErrorBody, ErrorCode, ValidationErrorBody, ValidationIssue } from "@fw/runtime";
