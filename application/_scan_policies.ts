/**
 * Route discovery together with the route policies, for `api()`'s `await import()` when a
 * generated loader's routes declare a policy: one dynamic import instead of two.
 *
 * @module
 */

export { discoverRoutes } from "./_scan.ts";
import "./policies/_route_policies.ts";
