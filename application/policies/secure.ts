/**
 * The access policy of one route (`.secure()`), checked before validation and the handler:
 *
 * - no verified identity (`user` in the async context, set by `oauth()`) -> 401 with
 *   `WWW-Authenticate: Bearer` (plus `error="invalid_token"` when a token was sent but rejected);
 * - a required scope missing -> 403 with `WWW-Authenticate: Bearer error="insufficient_scope"`;
 * - a required role missing, or the guard answering `false` -> 403.
 *
 * Scopes come from the `scope` (space separated) or `scp` claim, roles from `roles`. A guard
 * `(user, ctx) => boolean | Promise<boolean>` runs after the scope and role checks and sees the
 * raw (not yet validated) params; an exception it throws answers as usual (its status, or 500).
 *
 * `oauth()`'s verifier records here why it rejected a request's token (`authFailures`), for the
 * `WWW-Authenticate` header.
 *
 * @module
 */

import { type AuthUser, tryContext } from "@fw/runtime";
import { jsonError } from "../_errors.ts";
import type { Guard, SecureMeta } from "../endpoint_types.ts";
import type { BaseContext } from "../request_context.ts";

/** Why a bearer token was not accepted. */
export interface AuthFailure {
  /** 401 for a bad token, 503 when the signing keys could not be fetched. */
  readonly status: 401 | 503;
  /** A short reason for `WWW-Authenticate: Bearer error_description`. */
  readonly description: string;
}

/** Failed verifications by request, set by the `oauth()` middleware. */
export const authFailures: WeakMap<Request, AuthFailure> = new WeakMap();

function quoted(value: string): string {
  return `"${value.replace(/["\\]/g, "")}"`;
}

/**
 * The verified identity of the current request, if any.
 *
 * @returns `user` from the async context.
 */
export function currentUser(): AuthUser | undefined {
  return tryContext<{ user?: AuthUser }>()?.user;
}

/** The compiled `.secure()` policy of one route. Internal: built by the endpoint compiler. */
export class SecurePolicy {
  readonly #scopes: readonly string[];
  readonly #roles: readonly string[];
  /** The guard, when `.secure(guard)` was used (it needs a `ctx`). */
  readonly guard: Guard | undefined;

  /** @param meta What `.secure()` stored. */
  constructor(meta: SecureMeta) {
    this.#scopes = meta.scopes;
    this.#roles = meta.roles;
    this.guard = meta.guard;
  }

  /**
   * Checks identity, scopes and roles (not the guard).
   *
   * @param req The request.
   * @param user The verified identity, if any.
   * @returns The 401/403/503 answer, or `undefined` to go on.
   */
  check(req: Request, user: AuthUser | undefined): Response | undefined {
    if (user === undefined) return unauthenticated(req);
    for (const scope of this.#scopes) {
      if (!user.scopes.includes(scope)) {
        const all = this.#scopes.join(" ");
        return jsonError(403, `Missing scope "${scope}"`, {
          "www-authenticate": `Bearer error="insufficient_scope", scope=${quoted(all)}`,
        });
      }
    }
    for (const role of this.#roles) {
      if (!user.roles.includes(role)) return jsonError(403, `Missing role "${role}"`);
    }
    return undefined;
  }

  /**
   * Runs the guard.
   *
   * @param user The verified identity.
   * @param ctx The request context.
   * @returns The 403 answer, `undefined` to go on, or a promise of either.
   */
  runGuard(
    user: AuthUser,
    ctx: BaseContext<unknown, unknown>,
  ): Response | undefined | Promise<Response | undefined> {
    const verdict = this.guard!(user, ctx);
    if (verdict instanceof Promise) return verdict.then(denied);
    return denied(verdict);
  }
}

function denied(verdict: boolean): Response | undefined {
  return verdict === true ? undefined : jsonError(403, "Access denied");
}

function unauthenticated(req: Request): Response {
  const failure = authFailures.get(req);
  if (failure === undefined) {
    return jsonError(401, "Authentication required", { "www-authenticate": "Bearer" });
  }
  if (failure.status === 503) return jsonError(503, failure.description);
  return jsonError(401, `Invalid token: ${failure.description}`, {
    "www-authenticate": `Bearer error="invalid_token", error_description=${
      quoted(failure.description)
    }`,
  });
}
