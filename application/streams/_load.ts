/**
 * `loadStreams()`: loads the stream code (SSE, WebSocket, their compiler) on demand. `api()`
 * calls it at warmup when a route is a stream.
 *
 * @module
 */

/** Loads the stream code once; loading it installs the compiler `compileEndpoint()` uses. */
export async function loadStreams(): Promise<void> {
  await import("./compile_stream.ts");
}
