/**
 * The one module that imports `fast-check` (a test-only dependency in the root `deno.json`), and
 * the settings every property test shares: a fixed number of runs (`FC_RUNS`, default 100, so the
 * suite stays fast and CI runs the same count every time) and a seed that is printed when a
 * property fails (fast-check puts `seed` and `path` in the message). Re-run a failure with
 * `FC_SEED=<seed> deno test -A tests/property/`.
 *
 * @module
 */

import fc from "fast-check";

const runs = Number(Deno.env.get("FC_RUNS") ?? 100);
const seed = Deno.env.get("FC_SEED");

fc.configureGlobal({
  numRuns: Number.isInteger(runs) && runs > 0 ? runs : 100,
  ...(seed !== undefined ? { seed: Number(seed) } : {}),
});

export { fc };

/**
 * Checks a property with the shared settings.
 *
 * @param property The property.
 * @param numRuns Runs for this property (default `FC_RUNS`).
 */
export function check<Ts extends [unknown, ...unknown[]]>(
  property: fc.IProperty<Ts> | fc.IAsyncProperty<Ts>,
  numRuns?: number,
): void | Promise<void> {
  const params = numRuns === undefined ? {} : { numRuns: Math.min(numRuns, runs) };
  if (property.isAsync()) return fc.assert(property as fc.IAsyncProperty<Ts>, params);
  return fc.assert(property as fc.IProperty<Ts>, params);
}
