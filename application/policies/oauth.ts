/**
 * `oauth()`: verifies bearer JWTs and puts the identity in the async context as `user`, where
 * `.secure()` routes, handlers (`useContext().user`) and the events publisher (`auth.*`
 * attributes) read it. Verification is done by `npm:jose`, loaded with the plugin's verifier
 * (`_oauth_verifier.ts`, the one module that imports it) when the plugin is set up, so importing
 * `@fw/application` loads neither. It checks the signature against a shared `secret`, a
 * `publicKey`, or the keys of a remote JWKS (fetched, cached, and fetched again when a token
 * names a key id it does not know, so key rotation needs no restart); then `iss`, `aud`, `exp`
 * and `nbf`.
 *
 * A request without a bearer token goes on without `user`; so does one whose token fails, and a
 * `.secure()` route then answers 401 with `WWW-Authenticate: Bearer error="invalid_token"` (503
 * when the JWKS could not be fetched). Public routes are never refused because of a token.
 *
 * Verified tokens are cached by their string until they expire (at most `cacheTtlMs`, in a
 * bounded map), so a client that sends the same token again costs one map lookup.
 *
 * @module
 */

import type { AuthUser, Plugin } from "@fw/runtime";
import { invalidOAuth as fail, nonNegative as positive } from "./_auth.ts";
import type { OAuthVerifier } from "./_oauth_verifier.ts";

export { userFromClaims } from "./_auth.ts";

/** Remote JWKS settings of {@linkcode OAuthOptions}. */
export interface JwksOptions {
  /** Least time between two fetches caused by an unknown key id (default 30,000 ms). */
  readonly cooldownMs?: number;
  /** Keys are fetched again after this age (default 600,000 ms). */
  readonly cacheMaxAgeMs?: number;
  /** Fetch time-out (default 5,000 ms). */
  readonly timeoutMs?: number;
}

/** Options of {@linkcode oauth}: the expected issuer and audience, and one key source. */
export interface OAuthOptions {
  /** Expected `iss` claim (one value or several accepted ones). */
  readonly issuer: string | readonly string[];
  /** Expected `aud` claim (the token must name one of these). */
  readonly audience: string | readonly string[];
  /** URL of the issuer's JSON Web Key Set (RS256, ES256, EdDSA... keys selected by `kid`). */
  readonly jwksUrl?: string | URL;
  /** Shared secret for HS256/HS384/HS512 (at least 32 bytes). */
  readonly secret?: string | Uint8Array;
  /** A public key: SPKI PEM (then `algorithms[0]` is its algorithm, default RS256), JWK or CryptoKey. */
  readonly publicKey?: string | JsonWebKey | CryptoKey;
  /** Accepted `alg` values (default: those of the key source). `none` is never accepted. */
  readonly algorithms?: readonly string[];
  /** Leeway for `exp` and `nbf`, in seconds (default 0). */
  readonly clockToleranceSec?: number;
  /** Most verified tokens cached at once (default 10,000). */
  readonly maxCachedTokens?: number;
  /** Longest time a verified token is cached (default 300,000 ms; never past its `exp`). */
  readonly cacheTtlMs?: number;
  /** Remote JWKS settings. */
  readonly jwks?: JwksOptions;
}

/** The `oauth()` plugin. */
export interface OAuthPlugin extends Plugin {
  /**
   * Verifies a token (after `setup`), for checks outside HTTP (a WebSocket message, a job).
   *
   * @param token The compact JWT.
   * @returns The identity.
   * @throws {Error} A `jose` error when the token is not accepted.
   */
  verify(token: string): Promise<AuthUser>;
}

const HMAC = ["HS256", "HS384", "HS512"];

function nonEmpty(value: unknown, name: string): string | string[] {
  if (typeof value === "string" && value !== "") return value;
  if (
    Array.isArray(value) && value.length > 0 &&
    value.every((v) => typeof v === "string" && v !== "")
  ) {
    return [...value];
  }
  fail(`"${name}" must be a non-empty string or a list of them`);
}

function checkSources(o: OAuthOptions): void {
  const sources = ["jwksUrl", "secret", "publicKey"].filter((k) =>
    o[k as keyof OAuthOptions] !== undefined
  );
  if (sources.length !== 1) {
    fail(
      `give exactly one of "jwksUrl", "secret" or "publicKey" (got ${
        sources.length ? sources.map((s) => `"${s}"`).join(", ") : "none"
      })`,
    );
  }
}

/**
 * Creates the OAuth plugin: a middleware that verifies `Authorization: Bearer <jwt>` and sets
 * `user` (claims `sub`, `email`, `azp`, `client_id`, scopes from `scope`/`scp`, `roles`, and
 * every claim) in the request's async context.
 *
 * @param options Issuer, audience and one of `jwksUrl`, `secret`, `publicKey`.
 * @returns The plugin.
 * @throws {TypeError} At start-up: a missing issuer or audience, not exactly one key source, a
 *   secret shorter than 32 bytes, an invalid URL or key, or a negative duration (named).
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { api, application, endpoint } from "@fw/application";
 * import { oauth } from "@fw/application/oauth";
 *
 * const me = endpoint().secure().handle(() => "secret stuff");
 * const app = application()
 *   .use(oauth({ issuer: "https://id.example", audience: "api", secret: "a".repeat(32) }))
 *   .use(api({ autoScan: false }).route("GET", "/me", me));
 * const res = await app.request("/me");
 * assert.equal(res.status, 401);
 * assert.equal(res.headers.get("www-authenticate"), "Bearer");
 * ```
 */
export function oauth(options: OAuthOptions): OAuthPlugin {
  if (typeof options !== "object" || options === null) fail("expected an object");
  const issuer = nonEmpty(options.issuer, "issuer");
  const audience = nonEmpty(options.audience, "audience");
  const tolerance = positive(options.clockToleranceSec, "clockToleranceSec", 0);
  const ttl = positive(options.cacheTtlMs, "cacheTtlMs", 300_000);
  const maxTokens = options.maxCachedTokens ?? 10_000;
  if (!Number.isInteger(maxTokens) || maxTokens < 0) {
    fail(`"maxCachedTokens" must be a non-negative integer, got ${maxTokens}`);
  }
  const algorithms = options.algorithms === undefined
    ? (options.secret !== undefined ? HMAC : undefined)
    : [...options.algorithms];
  if (algorithms?.some((a) => typeof a !== "string" || a.toLowerCase() === "none")) {
    fail(`"algorithms" must be algorithm names, and "none" is never accepted`);
  }
  checkSources(options);
  const settings = { issuer, audience, algorithms, tolerance, ttl, maxTokens };
  // the verifier (token cache, key source, jose) loads at setup, or at a first verify() before it
  let verifier: Promise<OAuthVerifier> | undefined;
  const load = () =>
    verifier ??= import("./_oauth_verifier.ts").then((m) => m.oauthVerifier(options, settings));

  return {
    name: "oauth",
    async verify(token: string): Promise<AuthUser> {
      return await (await load()).verify(token);
    },
    async setup(ctx) {
      await (await load()).setup(ctx);
    },
  };
}
