/**
 * The fallback async slot on `AsyncLocalStorage` (`node:async_hooks`), for runtimes where the
 * frame slot of `_async_slot.ts` is not available. Imported only on that path, so a cold start on
 * Deno does not load the Node.js compatibility modules.
 *
 * @module
 */

import { AsyncLocalStorage } from "node:async_hooks";
import type { AsyncSlot } from "./_async_slot.ts";

/**
 * A slot on a new `AsyncLocalStorage`.
 *
 * @returns The slot.
 */
export function storageSlot<T>(): AsyncSlot<T> {
  const storage = new AsyncLocalStorage<T>();
  return {
    kind: "AsyncLocalStorage",
    run: (value, fn, a, b) => storage.run(value, fn, a!, b!),
    get: () => storage.getStore(),
  };
}
