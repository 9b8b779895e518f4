/**
 * `loadPolicies()`: loads the route policies (`.cors()`, `.rateLimit()`, `.secure()`) on demand.
 * `api()` calls it at warmup when a route declares a policy.
 *
 * @module
 */

/** Loads the policy code once; loading it installs the compiler `compileEndpoint()` uses. */
export async function loadPolicies(): Promise<void> {
  await import("./_route_policies.ts");
}
