/**
 * Compiles stream endpoints (spec 4.3: server-stream over SSE or WebSocket, client-stream and
 * bidirectional over WebSocket). Not implemented yet: the streaming issue fills this in, and until
 * then a stream endpoint fails at warmup, naming the route.
 *
 * @module
 */

import type { RouteHandler } from "@fw/runtime";
import type { EndpointDefinition } from "./endpoint_types.ts";
import type { CompileEndpointOptions } from "./compile_endpoint.ts";

/**
 * Compiles a stream endpoint.
 *
 * @param def An endpoint whose `.body()` or `.returns()` is a `Stream()`.
 * @param options Method, route and application context.
 * @returns Never, for now.
 * @throws {TypeError} Always: stream endpoints are not supported yet.
 */
export function compileStreamEndpoint(
  def: EndpointDefinition,
  options: CompileEndpointOptions,
): RouteHandler {
  throw new TypeError(
    `Cannot compile route "${options.method} ${options.route}": ${def.mode} stream endpoints are not supported yet`,
  );
}
