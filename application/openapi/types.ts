/**
 * Type-level half of the OpenAPI generator: the options it takes and the OpenAPI 3.0.3 objects it
 * writes (only the parts fw emits).
 *
 * @module
 */

import type { JsonSchemaObject } from "@fw/runtime";
import type { EndpointDefinition, ResponseMeta } from "../endpoint_types.ts";

/** The `info` object of an OpenAPI document. */
export interface OpenApiInfo {
  /** API title. */
  readonly title: string;
  /** API version (the document's `info.version`, not the OpenAPI version). */
  readonly version: string;
  /** API description (CommonMark). */
  readonly description?: string;
}

/** A server the API is reachable at. */
export interface OpenApiServer {
  /** Base URL, absolute (`https://api.example.com`) or relative (`/v1`). */
  readonly url: string;
  /** What this server is. */
  readonly description?: string;
}

/** Options of `api().openapi()` and `openApiDocument()`. */
export interface OpenApiOptions {
  /** Title, version and description. */
  readonly info: OpenApiInfo;
  /** Server URLs; default none (tools use the origin the document was loaded from). */
  readonly servers?: readonly OpenApiServer[];
}

/**
 * The `api({ openapi })` option. The flat form (`title`, `version`, `description`) and
 * the `info` form of `api().openapi()` are both accepted; give one of them.
 */
export interface ApiOpenApiConfig {
  /** API title; or give `info`. */
  readonly title?: string;
  /** API version, written to `info.version`; or give `info`. */
  readonly version?: string;
  /** API description; or give `info`. */
  readonly description?: string;
  /** Title, version and description in one object, as `api().openapi()` takes them. */
  readonly info?: OpenApiInfo;
  /** Server URLs. */
  readonly servers?: readonly OpenApiServer[];
  /**
   * Where the JSON document is served, under the plugin's prefix (default `/openapi.json`);
   * `false` serves nothing (`generate` still writes `.gen/openapi.json`).
   */
  readonly path?: string | false;
  /** Where an interactive documentation page (Swagger UI) is served, for example `/docs`. */
  readonly docs?: string;
}

/** A route to document (`api().routes` entries are routes). */
export interface OpenApiRoute {
  /** Upper-case method. */
  readonly method: string;
  /** Router pattern including the prefix (`/v1/users/:id`, `/files/*path`). */
  readonly path: string;
  /** The file that defined it, named in errors. */
  readonly source?: string;
  /** The endpoint definition. */
  readonly definition: EndpointDefinition;
}

/** A parameter of an operation (path or query). */
export interface OpenApiParameter {
  /** Parameter name. */
  readonly name: string;
  /** Where it is read from. */
  readonly in: "path" | "query";
  /** Whether it must be given (always true for path parameters). */
  readonly required: boolean;
  /** Its description (`Desc`). */
  readonly description?: string;
  /** `form` for a query array: the key is repeated for each value. */
  readonly style?: "form";
  /** `true` for a query array: `?tag=a&tag=b`, never `?tag=a,b`. */
  readonly explode?: boolean;
  /** Its schema. */
  readonly schema: JsonSchemaObject;
}

/** A media type entry of a request or response body. */
export interface OpenApiMediaType {
  /** The body schema. */
  readonly schema: JsonSchemaObject;
}

/** A header of a response. */
export interface OpenApiHeader {
  /** What the header carries. */
  readonly description: string;
  /** Whether every such response carries it. */
  readonly required?: boolean;
  /** Its schema. */
  readonly schema: JsonSchemaObject;
}

/** A documented response. */
export interface OpenApiResponse {
  /** Description (always present). */
  readonly description: string;
  /** Response headers. */
  readonly headers?: Readonly<Record<string, OpenApiHeader>>;
  /** Bodies by media type. */
  readonly content?: Readonly<Record<string, OpenApiMediaType>>;
}

/** A request body. */
export interface OpenApiRequestBody {
  /** Description (`Desc` on the body schema). */
  readonly description?: string;
  /** Whether a body must be sent. */
  readonly required: boolean;
  /** Bodies by media type (`application/json`). */
  readonly content: Readonly<Record<string, OpenApiMediaType>>;
}

/**
 * How a stream endpoint talks (the `x-fw-stream` extension of its operation): the mode of spec
 * 4.3, the transports it accepts, and the message schemas.
 */
export interface OpenApiStreamExtension {
  /** `server-stream`, `client-stream` or `bidi`. */
  readonly mode: "server-stream" | "client-stream" | "bidi";
  /** `sse` and `websocket` for server streams, `websocket` otherwise. */
  readonly transports: readonly ("sse" | "websocket")[];
  /** Schema of each message the server sends (a client stream's one final message). */
  readonly message?: JsonSchemaObject;
  /** Schema of each message the client sends (client streams and bidi). */
  readonly clientMessage?: JsonSchemaObject;
  /** Schema of a server stream's one input (SSE request body, first WebSocket message). */
  readonly body?: JsonSchemaObject;
}

/** One operation (a method on a path). */
export interface OpenApiOperation {
  /** Stable id: the method and the path in camel case (`getUsersById`). */
  readonly operationId: string;
  /** Grouping: the first static segment of the path below the prefix. */
  readonly tags?: readonly string[];
  /** `.description()`, plus the access rules of `.secure()` and the `.rateLimit()` window. */
  readonly description?: string;
  /** Path parameters (in path order), then query parameters (in schema order). */
  readonly parameters?: readonly OpenApiParameter[];
  /** The JSON body of `.body()`. */
  readonly requestBody?: OpenApiRequestBody;
  /** Responses by status code (`"200"`, `"2XX"`), sorted. */
  readonly responses: Readonly<Record<string, OpenApiResponse>>;
  /** `[{ bearerAuth: [] }]` for `.secure()` routes. */
  readonly security?: readonly Readonly<Record<string, readonly string[]>>[];
  /** Stream endpoints: mode, transports and message schemas. */
  readonly "x-fw-stream"?: OpenApiStreamExtension;
}

/** An OpenAPI 3.0.3 document as fw writes it. */
export interface OpenApiDocument {
  /** Always `"3.0.3"`. */
  readonly openapi: "3.0.3";
  /** Title, version and description. */
  readonly info: OpenApiInfo;
  /** Server URLs, when configured. */
  readonly servers?: readonly OpenApiServer[];
  /** Tags used by the operations, sorted. */
  readonly tags?: readonly { readonly name: string }[];
  /** Operations by path (`/users/{id}`) and lower-case method; paths sorted. */
  readonly paths: Readonly<Record<string, Readonly<Record<string, OpenApiOperation>>>>;
  /** Named schemas (sorted) and, when a route is secure, the `bearerAuth` scheme. */
  readonly components: {
    /** `schema(name, ...)` schemas plus `ErrorResponse` and `ValidationErrorResponse`. */
    readonly schemas: Readonly<Record<string, JsonSchemaObject>>;
    /** `bearerAuth` (HTTP bearer, JWT) when any route uses `.secure()`. */
    readonly securitySchemes?: Readonly<Record<string, JsonSchemaObject>>;
  };
}

/** Options of `openApiDocument()`. */
export interface OpenApiDocumentOptions extends OpenApiOptions {
  /** Error responses documented on every route (`api().throws()`). */
  readonly globalThrows?: readonly ResponseMeta[];
  /** The routes' common prefix, left out of the tags (default none). */
  readonly prefix?: string;
  /** The body limit of `http()`, stated in the 413 responses (default: not stated). */
  readonly maxBodyBytes?: number;
}
