/**
 * `module()`: a group of plugins under a path. `api()` inside a module with `.path("/v1")`
 * serves its routes under `/v1` unless it sets its own `prefix`.
 *
 * @module
 */

import type { AppContext, Plugin } from "@fw/runtime";

/** A plugin that groups other plugins under a path prefix. */
export interface Module extends Plugin {
  /**
   * Sets the module path (prepended to the routes of the plugins inside).
   *
   * @param path A path starting with `/`.
   * @returns This module.
   */
  path(path: string): Module;
  /**
   * Adds a plugin to the module.
   *
   * @param plugin The plugin.
   * @returns This module.
   */
  use(plugin: Plugin): Module;
  /** The plugins added with `use()`, in order (for tools such as `generate`). */
  readonly plugins: readonly Plugin[];
}

/**
 * Creates a module.
 *
 * @param name Name used in logs and errors (default `module`).
 * @returns The module.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { application, module } from "@fw/application";
 * const v1 = module().path("/v1").use({
 *   name: "routes",
 *   warmup: (ctx) =>
 *     ctx.addRoute({ method: "GET", path: `${ctx.prefix}/ping`, handler: () => new Response("pong") }),
 * });
 * const app = application().use(v1);
 * assert.equal(await (await app.request("/v1/ping")).text(), "pong");
 * ```
 */
export function module(name = "module"): Module {
  const plugins: Plugin[] = [];
  let prefix = "";
  const child = (ctx: AppContext): AppContext =>
    Object.create(ctx, { prefix: { value: ctx.prefix + prefix, enumerable: true } });
  const self: Module = {
    name,
    plugins,
    path(path: string): Module {
      if (typeof path !== "string" || !path.startsWith("/")) {
        throw new TypeError(
          `module().path() expects a path starting with "/", got ${JSON.stringify(path)}`,
        );
      }
      prefix = path === "/" ? "" : path.replace(/\/+$/, "");
      return self;
    },
    use(plugin: Plugin): Module {
      if (!plugin || typeof plugin.name !== "string") {
        throw new TypeError("module().use() expects a plugin (an object with a name)");
      }
      plugins.push(plugin);
      return self;
    },
    async setup(ctx) {
      for (const p of plugins) await p.setup?.(child(ctx));
    },
    async warmup(ctx) {
      for (const p of plugins) await p.warmup?.(child(ctx));
    },
    async start(ctx) {
      for (const p of plugins) await p.start?.(child(ctx));
    },
    async stop(ctx) {
      for (const p of [...plugins].reverse()) await p.stop?.(child(ctx));
    },
  };
  return self;
}
