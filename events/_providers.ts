/**
 * The check of an `.inject({...})` argument, shared by `handler()` and `schedule()`.
 *
 * @module
 */

import { isProvider, type ProviderMap } from "@fw/runtime";

/**
 * Checks that every value of an `.inject()` argument is a provider.
 *
 * @param providers The argument.
 * @returns The same map, typed.
 * @throws {TypeError} For a non-object or a value not made with `provider()`, naming its key.
 */
export function checkProviders(providers: ProviderMap): ProviderMap {
  if (typeof providers !== "object" || providers === null) {
    throw new TypeError("Invalid .inject() argument: expected an object of providers");
  }
  for (const [k, p] of Object.entries(providers)) {
    if (!isProvider(p)) {
      throw new TypeError(
        `Invalid .inject() provider "${k}": expected a provider made with provider()`,
      );
    }
  }
  return providers;
}
