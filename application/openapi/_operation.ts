/**
 * One route as an OpenAPI operation: the `{name}` path template, a stable operation id, the tag,
 * parameters, request body, responses, security and the stream extension.
 *
 * @module
 */

import type { SchemaNode } from "@fw/runtime";
import type { EndpointDefinition, EndpointMeta, ResponseMeta } from "../endpoint_types.ts";
import type {
  OpenApiOperation,
  OpenApiParameter,
  OpenApiRequestBody,
  OpenApiRoute,
  OpenApiStreamExtension,
} from "./types.ts";
import { responsesOf, type SchemaWriter } from "./_responses.ts";
import { parsePattern } from "../router/router.ts";

/** Name of the security scheme `.secure()` routes require. */
export const BEARER_SCHEME = "bearerAuth";

/** A documented route before operation ids are assigned. */
export interface DraftOperation {
  /** OpenAPI path template (`/users/{id}`). */
  readonly path: string;
  /** Lower-case method. */
  readonly method: string;
  /** Operation id before de-duplication. */
  readonly idBase: string;
  /** The operation without its id. */
  readonly operation: Omit<OpenApiOperation, "operationId">;
}

const words = (s: string): string[] => s.split(/[^A-Za-z0-9]+/).filter(Boolean);
const cap = (s: string): string => s[0].toUpperCase() + s.slice(1);

function strip(node: SchemaNode): SchemaNode {
  return { ...node, description: undefined, optional: undefined };
}

function seconds(ms: number): string {
  return ms % 1000 === 0 ? `${ms / 1000} s` : `${ms} ms`;
}

function describe(meta: EndpointMeta): string | undefined {
  const parts: string[] = [];
  if (meta.description) parts.push(meta.description);
  if (meta.secure) {
    const rules = ["Requires a bearer token (JWT)."];
    const list = (xs: readonly string[]) => xs.map((x) => `\`${x}\``).join(", ");
    if (meta.secure.scopes.length) rules.push(`Required scopes: ${list(meta.secure.scopes)}.`);
    if (meta.secure.roles.length) rules.push(`Required roles: ${list(meta.secure.roles)}.`);
    if (meta.secure.guard) rules.push("Access is also decided by a guard.");
    parts.push(rules.join(" "));
  }
  if (meta.rateLimit) {
    const { max, windowMs } = meta.rateLimit;
    parts.push(`Rate limited: at most ${max} requests per ${seconds(windowMs)} per client.`);
  }
  return parts.length ? parts.join("\n\n") : undefined;
}

function parametersOf(
  route: OpenApiRoute,
  template: readonly { name: string; catchAll: boolean }[],
  write: SchemaWriter,
): OpenApiParameter[] {
  const meta = route.definition.meta;
  const declared = meta.params?.properties ?? {};
  for (const name of Object.keys(declared)) {
    if (!template.some((p) => p.name === name)) {
      throw new TypeError(`.params() declares "${name}", which is not a parameter of the path`);
    }
  }
  const out: OpenApiParameter[] = template.map(({ name, catchAll }) => {
    const node = declared[name];
    const description = node?.description ??
      (catchAll ? 'The rest of the path; it may contain "/"' : undefined);
    return {
      name,
      in: "path",
      required: true,
      ...(description !== undefined && { description }),
      schema: node ? write(strip(node)) : { type: "string" },
    };
  });
  for (const [name, node] of Object.entries(meta.query?.properties ?? {})) {
    out.push({
      name,
      in: "query",
      required: !node.optional,
      ...(node.description !== undefined && { description: node.description }),
      ...(node.kind === "array" && { style: "form", explode: true }),
      schema: write(strip(node)),
    });
  }
  return out;
}

function requestBodyOf(body: SchemaNode, write: SchemaWriter): OpenApiRequestBody {
  return {
    ...(body.description !== undefined && { description: body.description }),
    required: !body.optional,
    content: { "application/json": { schema: write(strip(body)) } },
  };
}

function streamOf(def: EndpointDefinition, write: SchemaWriter): OpenApiStreamExtension {
  const mode = def.mode as OpenApiStreamExtension["mode"];
  const { body, returns } = def.meta;
  return {
    mode,
    transports: mode === "server-stream" ? ["sse", "websocket"] : ["websocket"],
    ...(returns?.schema && { message: write(returns.schema) }),
    ...(body && mode !== "server-stream" && { clientMessage: write(body) }),
    ...(body && mode === "server-stream" && { body: write(body) }),
  };
}

/**
 * Documents one route.
 *
 * @param route The route.
 * @param prefix The plugin's prefix (left out of the tag).
 * @param globalThrows `api().throws()` entries.
 * @param write Schema converter collecting components.
 * @param maxBodyBytes The body limit of `http()`, when known.
 * @returns The operation and where it goes.
 * @throws {TypeError} When `.params()` names a parameter the path does not have.
 */
export function operationOf(
  route: OpenApiRoute,
  prefix: string,
  globalThrows: readonly ResponseMeta[],
  write: SchemaWriter,
  maxBodyBytes?: number,
): DraftOperation {
  const segments = parsePattern(route.path);
  const template: { name: string; catchAll: boolean }[] = [];
  const id: string[] = [route.method.toLowerCase()];
  const path = "/" + segments.map((s) => {
    if (s[0] !== ":" && s[0] !== "*") {
      id.push(...words(s).map(cap));
      return s;
    }
    const name = s.slice(1);
    template.push({ name, catchAll: s[0] === "*" });
    id.push("By", ...words(name).map(cap));
    return `{${name}}`;
  }).join("/");
  const own = !prefix
    ? route.path
    : route.path === prefix
    ? "/"
    : route.path.startsWith(prefix + "/")
    ? route.path.slice(prefix.length)
    : route.path;
  const tag = parsePattern(own).find((s) => s[0] !== ":" && s[0] !== "*");

  const def = route.definition;
  const meta = def.meta;
  const parameters = parametersOf(route, template, write);
  const description = describe(meta);
  const operation: Omit<OpenApiOperation, "operationId"> = {
    ...(tag && { tags: [tag] }),
    ...(description !== undefined && { description }),
    ...(parameters.length > 0 && { parameters }),
    ...(def.mode === "unary" && meta.body && { requestBody: requestBodyOf(meta.body, write) }),
    responses: responsesOf(def, globalThrows, write, {
      pathParams: template.length > 0,
      maxBodyBytes,
    }),
    ...(meta.secure && { security: [{ [BEARER_SCHEME]: [] }] }),
    ...(def.mode !== "unary" && { "x-fw-stream": streamOf(def, write) }),
  };
  return { path, method: route.method.toLowerCase(), idBase: id.join(""), operation };
}
