/**
 * `loadStreams()`: loads the stream code (SSE, WebSocket, their compiler) on demand. `api()`
 * calls it at warmup when a route is a stream.
 *
 * @module
 */

import { type StreamCompiler, streamCompiler } from "./_registry.ts";

/**
 * Loads the stream code once; loading it installs the compiler `compileEndpoint()` uses.
 *
 * @returns The stream compiler.
 */
export async function loadStreams(): Promise<StreamCompiler> {
  if (streamCompiler() === undefined) await import("./compile_stream.ts");
  return streamCompiler()!;
}
