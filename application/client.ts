/**
 * `@fw/application/client`: a typed client of an fw API with no code to write. `generate` writes
 * the route map `ApiRoutes` into `.gen/api.gen.ts`; `apiClient<ApiRoutes>(url)` then checks every
 * path, param, query and body against its route's definition and types each result by status,
 * documented errors included, and types the messages of SSE and WebSocket stream endpoints. It
 * imports no server code and no Deno API, so it bundles for browsers.
 *
 * @example
 * ```ts ignore
 * import { apiClient } from "@fw/application/client";
 * import type { ApiRoutes } from "./.gen/api.gen.ts";
 *
 * const client = apiClient<ApiRoutes>("https://api.example", { token: async () => "Bearer ..." });
 * const res = await client.get("/users/:id", { params: { id: 1 } });
 * if (res.status === 200) console.log(res.data.name);
 * else if (res.status === 404) console.log(res.error.message);
 * for await (const price of client.stream("GET /prices")) console.log(price);
 * ```
 *
 * @module
 */

export {
  type ApiClient,
  apiClient,
  type ApiClientOptions,
  type FetchLike,
  type MethodCall,
} from "./client/api_client.ts";
export { type ApiEventStream } from "./client/sse_stream.ts";
export { type ApiSocket } from "./client/socket.ts";
export { ApiStreamError } from "./client/errors.ts";
export type {
  ApiErrorBody,
  ApiFailure,
  ApiResult,
  ApiSuccess,
  ApiValidationBody,
  BaseCallOptions,
  BodyOption,
  CallOptions,
  ConnectExtras,
  ConnectKey,
  ConnectOptions,
  DefinitionField,
  HttpMethod,
  IsStreamType,
  IsSuccessStatus,
  IsUnary,
  IsUntyped,
  ItemOf,
  NoBodyStatus,
  OptionsArg,
  ParamNames,
  ParamsOf,
  ParamsOption,
  PathOfKey,
  QueryOption,
  QueryValue,
  ResultOf,
  RouteDef,
  RouteEntry,
  RoutePath,
  SegmentParam,
  SocketInput,
  StreamExtras,
  StreamKey,
  StreamMessage,
  StreamOptions,
  TypesOf,
} from "./client/types.ts";
