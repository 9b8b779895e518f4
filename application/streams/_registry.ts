/**
 * The registry of open stream connections that `Application.stop()` closes before the server
 * drains, and the hook through which `compileEndpoint()` reaches the stream compiler. Kept apart
 * from the stream code so that an application without stream routes never loads it: `api()`
 * imports `compile_stream.ts` at warmup only when a route is a stream.
 *
 * @module
 */

import type { AppContext, RouteHandler } from "@fw/runtime";
import type { CompileEndpointOptions, EndpointDefinition } from "../endpoint_types.ts";
import { compilerPartMissing, LatePart } from "../_late.ts";

/** One open stream connection, as the registry sees it. */
export interface LiveStream {
  /** Ends the connection (SSE end of stream, WebSocket close 1001). */
  shutdown(): void;
  /** Settles when the handler finished and the connection is closed. */
  readonly done: Promise<void>;
}

const registries = new WeakMap<object, Set<LiveStream>>();

/**
 * The set of open connections of the application that owns `app` (keyed by its container, which
 * modules share with the root). Stream endpoints add a connection when it opens and delete it
 * when it is done.
 *
 * @param app The application context.
 * @returns The live set.
 */
export function streamRegistry(app: AppContext): Set<LiveStream> {
  let set = registries.get(app.container);
  if (set === undefined) registries.set(app.container, set = new Set());
  return set;
}

/**
 * Closes every open stream connection of an application and waits (up to `graceMs`) for their
 * handlers to finish. Called by `Application.stop()` before plugins stop, so the HTTP server can
 * drain.
 *
 * @param app The application context.
 * @param graceMs Longest wait for handlers that ignore `ctx.signal`.
 * @returns Settles when every connection is done or the grace period is over.
 */
export async function closeStreams(app: AppContext, graceMs = 5_000): Promise<void> {
  const set = registries.get(app.container);
  if (set === undefined || set.size === 0) return;
  const all = [...set];
  for (const live of all) live.shutdown();
  let timer: ReturnType<typeof setTimeout> | undefined;
  await Promise.race([
    Promise.allSettled(all.map((l) => l.done)),
    new Promise<void>((resolve) => timer = setTimeout(resolve, graceMs)),
  ]);
  clearTimeout(timer);
}

/** Compiles a stream endpoint definition (`compileStreamEndpoint`). */
export type StreamCompiler = (
  def: EndpointDefinition,
  options: CompileEndpointOptions,
) => RouteHandler;

/** The stream compiler, installed by `compile_stream.ts` when it is loaded (`api()` imports it at warmup). */
export const streamCompiler: LatePart<StreamCompiler> = new LatePart(
  compilerPartMissing("stream"),
);
