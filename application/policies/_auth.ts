/**
 * What `oauth()` shares with its verifier (`_oauth_verifier.ts`, loaded at setup): the option
 * errors and the identity of a verified token. What the verifier tells `.secure()` about a token
 * it rejected (`authFailures`) is in `secure.ts`, so a route policy does not load this module.
 * Internal.
 *
 * @module
 */

import type { AuthUser } from "@fw/runtime";

/** Throws the `TypeError` of an invalid `oauth()` option. */
export function invalidOAuth(detail: string): never {
  throw new TypeError(`Invalid oauth() options: ${detail}`);
}

/** A non-negative number option of `oauth()`, or its default. */
export function nonNegative(value: number | undefined, name: string, fallback: number): number {
  if (value === undefined) return fallback;
  if (typeof value !== "number" || !Number.isFinite(value) || value < 0) {
    invalidOAuth(`"${name}" must be a non-negative number, got ${value}`);
  }
  return value;
}

function words(value: unknown): string[] {
  if (typeof value === "string") return value.split(" ").filter((s) => s !== "");
  if (Array.isArray(value)) return value.filter((s): s is string => typeof s === "string");
  return [];
}

function text(value: unknown): string | undefined {
  return typeof value === "string" ? value : undefined;
}

/**
 * The `user` of a verified token's claims.
 *
 * @param claims The JWT payload.
 * @returns The identity (frozen: it is shared by every request with the same token).
 */
export function userFromClaims(claims: Record<string, unknown>): AuthUser {
  return Object.freeze({
    sub: text(claims.sub),
    email: text(claims.email),
    azp: text(claims.azp),
    client_id: text(claims.client_id),
    scopes: Object.freeze(words(claims.scope ?? claims.scp)) as string[],
    roles: Object.freeze(words(claims.roles)) as string[],
    claims: Object.freeze({ ...claims }),
  });
}
