/**
 * The responses of one OpenAPI operation: the ones fw always answers (400, 500), the ones its
 * policies answer (401, 403, 413, 415, 429), then the declared ones, each later entry replacing an
 * earlier one of the same status.
 *
 * @module
 */

import { ERROR_CODES, type JsonSchemaObject, type SchemaNode, statusText } from "@fw/runtime";
import type { EndpointDefinition, ResponseMeta } from "../endpoint_types.ts";
import type { OpenApiHeader, OpenApiResponse } from "./types.ts";

/** Component name of the `{statusCode, message, error}` envelope. */
export const ERROR_SCHEMA = "ErrorResponse";
/** Component name of the `{message, errors: [{field, message}]}` validation body. */
export const VALIDATION_SCHEMA = "ValidationErrorResponse";

/** The two error bodies fw answers with, as components. */
export const ERROR_COMPONENTS: Readonly<Record<string, JsonSchemaObject>> = {
  [ERROR_SCHEMA]: {
    type: "object",
    description: "The error envelope of every thrown HttpException and of unexpected errors",
    properties: {
      statusCode: { type: "integer", description: "The HTTP status", example: 404 },
      message: { type: "string", description: "What went wrong", example: "User 7 not found" },
      error: { type: "string", description: "The status phrase", example: "Not Found" },
    },
    required: ["statusCode", "message", "error"],
  },
  [VALIDATION_SCHEMA]: {
    type: "object",
    description: "A request whose params, query or body failed validation",
    properties: {
      message: {
        type: "string",
        description: 'Every error message, joined with "; "',
        example: "params.id must be an integer",
      },
      errors: {
        type: "array",
        items: {
          type: "object",
          properties: {
            field: {
              type: "string",
              description: "The input area and path (`params.id`, `body.tags[2]`)",
              example: "params.id",
            },
            message: { type: "string", example: "params.id must be an integer" },
          },
          required: ["field", "message"],
        },
      },
    },
    required: ["message", "errors"],
  },
};

const ref = (name: string): JsonSchemaObject => ({ $ref: `#/components/schemas/${name}` });
const JSON_TYPE = "application/json";

/** Converts a schema node to a JSON schema, collecting named schemas as components. */
export type SchemaWriter = (node: SchemaNode) => JsonSchemaObject;

function body(schema: JsonSchemaObject, node?: SchemaNode): OpenApiResponse["content"] {
  return { [node?.kind === "string" ? "text/plain" : JSON_TYPE]: { schema } };
}

function errorEntry(description: string, headers?: Record<string, OpenApiHeader>) {
  return { description, ...(headers && { headers }), content: body(ref(ERROR_SCHEMA)) };
}

function declared(entry: ResponseMeta, write: SchemaWriter, error: boolean): OpenApiResponse {
  if (entry.schema) {
    return { description: entry.description, content: body(write(entry.schema), entry.schema) };
  }
  return error ? errorEntry(entry.description) : { description: entry.description };
}

const INT: JsonSchemaObject = { type: "integer", minimum: 0 };
/** The headers of every response of a rate-limited route. */
const RATE_HEADERS: Record<string, OpenApiHeader> = {
  "RateLimit-Limit": { description: "Requests allowed per window", required: true, schema: INT },
  "RateLimit-Remaining": {
    description: "Requests left in this window",
    required: true,
    schema: INT,
  },
  "RateLimit-Reset": {
    description: "Seconds until the window resets",
    required: true,
    schema: INT,
  },
};
const RETRY_AFTER: Record<string, OpenApiHeader> = {
  "Retry-After": { description: "Seconds until the window resets", required: true, schema: INT },
};

/** The formats an object or array result is written in, by `Accept` (JSON by default). */
const NEGOTIATED = ["text/plain", "text/html", "application/xml", "application/yaml", "text/yaml"];

function negotiated(schema: JsonSchemaObject): OpenApiResponse["content"] {
  const text: JsonSchemaObject = { type: "string" };
  return {
    [JSON_TYPE]: { schema },
    ...Object.fromEntries(NEGOTIATED.map((type) => [type, { schema: text }])),
  };
}

const NEGOTIATION_NOTE = " The body is JSON unless `Accept` asks for YAML (`text/plain`, " +
  "`application/yaml`, `text/yaml`), XML (`application/xml`, `text/xml`) or HTML (`text/html`).";

/** What the responses depend on besides the endpoint. */
export interface RouteFacts {
  /** The path has parameters (malformed percent-encoding answers 400 with the envelope). */
  readonly pathParams?: boolean;
  /** The body limit of `http()`, stated in the 413. */
  readonly maxBodyBytes?: number;
}

/**
 * Builds the responses of an operation, sorted by status.
 *
 * @param def The endpoint definition.
 * @param globalThrows `api().throws()` entries.
 * @param write Schema converter.
 * @param facts The route's path parameters and body limit.
 * @returns Responses by status code.
 */
export function responsesOf(
  def: EndpointDefinition,
  globalThrows: readonly ResponseMeta[],
  write: SchemaWriter,
  facts: RouteFacts = {},
): Record<string, OpenApiResponse> {
  const meta = def.meta;
  const stream = def.mode !== "unary";
  const out = new Map<string, OpenApiResponse>();
  const set = (status: number | string, entry: OpenApiResponse) => out.set(String(status), entry);

  // path parameters with malformed percent-encoding are refused with the envelope
  const rejects = stream || facts.pathParams === true ||
    meta.mayThrow.some((c) => ERROR_CODES[c] === 400 && c !== "Validation");
  set(400, {
    description: rejects
      ? "Bad Request: validation failed, or the request was rejected"
      : "Validation failed",
    content: body(
      rejects ? { oneOf: [ref(VALIDATION_SCHEMA), ref(ERROR_SCHEMA)] } : ref(VALIDATION_SCHEMA),
    ),
  });
  set(500, errorEntry("Internal Server Error"));
  if (!stream && meta.body) {
    const limit = facts.maxBodyBytes === undefined
      ? "the server's limit"
      : `${facts.maxBodyBytes} bytes`;
    set(413, errorEntry(`Payload Too Large: the body exceeds ${limit}`));
    set(415, errorEntry("Unsupported Media Type: the body must be application/json"));
  }
  if (meta.secure) {
    set(
      401,
      errorEntry("Unauthorized: the bearer token is missing, expired or invalid", {
        "WWW-Authenticate": {
          description: "The `Bearer` challenge",
          required: true,
          schema: { type: "string" },
        },
      }),
    );
    const { scopes, roles, guard } = meta.secure;
    if (scopes.length > 0) {
      // a missing scope is answered with the challenge; a role or the guard without it
      const always = roles.length === 0 && !guard;
      set(
        403,
        errorEntry("Forbidden: a required scope or role is missing", {
          "WWW-Authenticate": {
            description: 'With a missing scope: `Bearer error="insufficient_scope"`',
            required: always,
            schema: { type: "string" },
          },
        }),
      );
    } else if (roles.length > 0 || guard) {
      set(403, errorEntry("Forbidden: a required scope or role is missing"));
    }
    set(
      503,
      errorEntry("Service Unavailable: the keys to verify the token cannot be fetched (`jwksUrl`)"),
    );
  }
  if (meta.rateLimit) set(429, errorEntry("Too Many Requests", RETRY_AFTER));
  const kind = meta.returns?.schema?.kind;
  const negotiates = !stream && (kind === undefined || kind === "object" || kind === "array");
  if (negotiates) {
    set(406, errorEntry("Not Acceptable: no format the route produces matches `Accept`"));
  }
  for (const code of meta.mayThrow) {
    const status = ERROR_CODES[code];
    if (status !== 400) set(status, errorEntry(statusText(status)));
  }
  for (const entry of globalThrows) set(entry.status, declared(entry, write, true));
  for (const entry of meta.responses) {
    set(entry.status, declared(entry, write, entry.status >= 400));
  }
  for (const entry of meta.throws) set(entry.status, declared(entry, write, true));

  if (stream) {
    set(101, {
      description: "Switching Protocols: with `Upgrade: websocket`, messages flow over a " +
        "WebSocket as JSON text frames (schemas in x-fw-stream)",
    });
  }
  if (def.mode === "server-stream") {
    set(200, {
      description: "Server-Sent Events: each event's `data` is one JSON message " +
        "(schema in x-fw-stream.message)",
      content: { "text/event-stream": { schema: { type: "string" } } },
    });
  } else if (!stream && meta.returns) {
    const { status, description, schema } = meta.returns;
    const many = schema && (schema.kind === "object" || schema.kind === "array");
    set(status, {
      description: (description ?? statusText(status)) + (many ? "." + NEGOTIATION_NOTE : ""),
      ...(schema && { content: many ? negotiated(write(schema)) : body(write(schema), schema) }),
    });
  } else if (!stream && ![...out.keys()].some((s) => s < "4")) {
    set("2XX", { description: "Success (no response schema declared)" });
  }
  const sorted = [...out].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
  if (!meta.rateLimit) return Object.fromEntries(sorted);
  return Object.fromEntries(sorted.map(([status, entry]) => [
    status,
    status === "101" ? entry : { ...entry, headers: { ...RATE_HEADERS, ...entry.headers } },
  ]));
}
