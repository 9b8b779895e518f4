/**
 * What the endpoint compilers and the dispatcher need of the route policies without loading
 * them: whether a route declares one, the hook through which the policies are built once their
 * code is loaded (`_route_policies.ts`, which `api()` imports at warmup when a route
 * declares a policy), and the preflight map.
 *
 * @module
 */

import type { AppContext, RequestInfo, RouteHandler } from "@fw/runtime";
import type { EndpointMeta } from "../endpoint_types.ts";
import type { RawParams } from "../request_context.ts";
import type { CorsPolicy } from "./cors.ts";
import { compilerPartMissing, LatePart } from "../_late.ts";

/** Something that serves a request (a compiled endpoint). */
export interface Runner {
  /** Serves one request. */
  run(req: Request, params: RawParams, info: RequestInfo): Response | Promise<Response>;
}

/** The compiled policies of one route (`RoutePolicies` in `_route_policies.ts`). */
export interface CompiledPolicies {
  /** The CORS policy, if any (registered for preflights). */
  readonly cors: CorsPolicy | undefined;
  /** True when the policies themselves never return a promise. */
  readonly sync: boolean;
  /** Serves one request through the policies and then `inner`. */
  run(
    req: Request,
    params: RawParams,
    info: RequestInfo,
    inner: Runner,
  ): Response | Promise<Response>;
}

/** The CORS policy of each compiled route handler that has one, for the dispatcher's preflight. */
export const preflights: WeakMap<RouteHandler, CorsPolicy> = new WeakMap();

/**
 * Whether an endpoint declares a policy.
 *
 * @param meta The endpoint's declarations.
 * @returns True with `.cors()`, `.rateLimit()` or `.secure()`.
 */
export function hasPolicies(meta: EndpointMeta): boolean {
  return meta.cors !== undefined || meta.rateLimit !== undefined || meta.secure !== undefined;
}

/** The constructor of the compiled policies of a route. */
export type PolicyCompiler = new (
  meta: EndpointMeta,
  label: string,
  app: AppContext,
  stream: boolean,
) => CompiledPolicies;

/** The policy compiler, installed by `_route_policies.ts` when it is loaded (`api()` imports it at warmup). */
export const policyCompiler: LatePart<PolicyCompiler> = new LatePart(
  compilerPartMissing("policy"),
);
