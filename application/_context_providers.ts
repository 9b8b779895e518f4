/**
 * Context providers: middlewares whose only job is to add values to the request's async context
 * (`oauth()` adds `user`). Each registers, beside its ordinary {@linkcode Middleware} form, a
 * function that returns those values directly; the dispatcher then merges them into the request's
 * context object without a middleware frame, a promise or a second context frame, so a request
 * whose token is already verified stays fully synchronous. Internal.
 *
 * @module
 */

import type { Middleware } from "@fw/runtime";

/** Values to add to the request's context, none, or a promise of either. */
export type ContextProvider = (
  req: Request,
) => object | undefined | Promise<object | undefined>;

/** The provider form of registered middlewares. */
export const contextProviders: WeakMap<Middleware, ContextProvider> = new WeakMap();
