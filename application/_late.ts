/**
 * `LatePart`: code that loads on demand (the stream code, the route policies, the OpenAPI
 * generator) and installs itself when its module is evaluated. Its users ask for it only when
 * they need it; `api()` loads it at warmup when they will. `handlersOnDemand()`: route handlers
 * whose code loads with the first request for one of them.
 *
 * @module
 */

import type { RouteHandler } from "@fw/runtime";

/** A part installed by the module that implements it. */
export class LatePart<T> {
  #value: T | undefined;

  /**
   * @param missing The error message when the part is asked for before its module is loaded,
   *   for the caller `label`; it names the import that loads it.
   */
  constructor(readonly missing: (label: string) => string) {}

  /**
   * Installs the part; its module calls this when it is evaluated.
   *
   * @param value The part.
   */
  install(value: T): void {
    this.#value = value;
  }

  /** True once the part's module was loaded. */
  get loaded(): boolean {
    return this.#value !== undefined;
  }

  /**
   * The part, for `label` (the route, or the call that needs it).
   *
   * @param label What needs the part, for the error.
   * @returns The part.
   * @throws {TypeError} When its module is not loaded, naming the import that loads it.
   */
  require(label: string): T {
    if (this.#value === undefined) throw new TypeError(this.missing(label));
    return this.#value;
  }
}

/**
 * The message of a part of the endpoint compiler (`what`: `stream`, `policy`) that a route needs
 * before its code is loaded.
 *
 * @param what The part.
 * @returns The message for the route `label` (`METHOD /route`).
 */
export function compilerPartMissing(what: string): (label: string) => string {
  return (label) =>
    `Cannot compile route "${label}": the ${what} code is not loaded; ` +
    `api() loads it at warmup, a direct caller of compileEndpoint() imports it from "@fw/application/compile"`;
}

/**
 * Handlers for `paths` whose code loads with the first request for any of them: `load()` runs
 * once, and from then on each path calls the handler it gave for that path directly (no promise
 * or lookup per request).
 *
 * @param paths The paths to answer; `load()` must give a handler for each.
 * @param load Imports the code and makes the handlers, by path.
 * @returns A handler for each path.
 */
export function handlersOnDemand(
  paths: readonly string[],
  load: () => Promise<Map<string, RouteHandler>>,
): Map<string, RouteHandler> {
  let loading: Promise<Map<string, RouteHandler>> | undefined;
  return new Map(paths.map((path) => {
    let loaded: RouteHandler | undefined;
    const handler: RouteHandler = (...args) =>
      loaded !== undefined
        ? loaded(...args)
        : (loading ??= load()).then((handlers) => (loaded = handlers.get(path)!)(...args));
    return [path, handler];
  }));
}
