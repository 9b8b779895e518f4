/**
 * `oauth()`: verifies bearer JWTs and puts the identity in the async context as `user`, where
 * `.secure()` routes, handlers (`useContext().user`) and the events publisher (`auth.*`
 * attributes) read it. Verification is done by `npm:jose` (this is the one module that imports
 * it, loaded when the plugin is set up): the signature against a shared `secret`, a `publicKey`, or the keys of a remote JWKS
 * (fetched, cached, and fetched again when a token names a key id it does not know, so key
 * rotation needs no restart); then `iss`, `aud`, `exp` and `nbf`.
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

import type * as Jose from "jose";
import {
  type AppContext,
  type AuthUser,
  type Clock,
  type Middleware,
  type Plugin,
  runInContext,
  systemClock,
} from "@fw/runtime";
import { type AuthFailure, authFailures } from "./_auth.ts";
import { type ContextProvider, contextProviders } from "../_context_providers.ts";
import { TokenCache } from "./_token_cache.ts";
import { requestHeader } from "../_request_header.ts";

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

type KeySource = Parameters<typeof Jose.jwtVerify>[1];

let jose: typeof Jose | undefined;

/** Loads `jose` on first use, so importing `@fw/application` does not. */
async function loadJose(): Promise<typeof Jose> {
  return jose ??= await import("jose");
}

const HMAC = ["HS256", "HS384", "HS512"];
const KEY_FAILURES = new Set(["ERR_JWKS_TIMEOUT", "ERR_JOSE_GENERIC", "ERR_JWKS_INVALID"]);

function fail(detail: string): never {
  throw new TypeError(`Invalid oauth() options: ${detail}`);
}

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

function positive(value: number | undefined, name: string, fallback: number): number {
  if (value === undefined) return fallback;
  if (typeof value !== "number" || !Number.isFinite(value) || value < 0) {
    fail(`"${name}" must be a non-negative number, got ${value}`);
  }
  return value;
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

async function keySource(o: OAuthOptions): Promise<KeySource> {
  const { createRemoteJWKSet, importJWK, importSPKI } = await loadJose();
  if (o.secret !== undefined) {
    const bytes = typeof o.secret === "string" ? new TextEncoder().encode(o.secret) : o.secret;
    if (!(bytes instanceof Uint8Array) || bytes.length < 32) {
      fail(`"secret" must be at least 32 bytes`);
    }
    return bytes;
  }
  if (o.jwksUrl !== undefined) {
    let url: URL;
    try {
      url = new URL(String(o.jwksUrl));
    } catch {
      fail(`"jwksUrl" is not a URL: "${o.jwksUrl}"`);
    }
    const j = o.jwks ?? {};
    return createRemoteJWKSet(url, {
      cooldownDuration: positive(j.cooldownMs, "jwks.cooldownMs", 30_000),
      cacheMaxAge: positive(j.cacheMaxAgeMs, "jwks.cacheMaxAgeMs", 600_000),
      timeoutDuration: Math.round(positive(j.timeoutMs, "jwks.timeoutMs", 5_000)),
    });
  }
  const key = o.publicKey!;
  try {
    if (typeof key === "string") return await importSPKI(key, o.algorithms?.[0] ?? "RS256");
    if (key instanceof CryptoKey) return key;
    return await importJWK(key as Parameters<typeof importJWK>[0], o.algorithms?.[0]);
  } catch (error) {
    fail(`"publicKey" cannot be imported: ${(error as Error).message}`);
  }
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

function failureOf(error: unknown, remote: boolean): AuthFailure {
  const code = (error as { code?: unknown })?.code;
  if (remote && (typeof code !== "string" || KEY_FAILURES.has(code))) {
    return { status: 503, description: "Cannot fetch the signing keys to verify the token" };
  }
  switch (code) {
    case "ERR_JWT_EXPIRED":
      return { status: 401, description: "token expired" };
    case "ERR_JWT_CLAIM_VALIDATION_FAILED":
      return {
        status: 401,
        description: `claim "${(error as { claim?: string }).claim}" is not accepted`,
      };
    case "ERR_JWS_SIGNATURE_VERIFICATION_FAILED":
      return { status: 401, description: "signature is invalid" };
    case "ERR_JOSE_ALG_NOT_ALLOWED":
    case "ERR_JOSE_NOT_SUPPORTED":
      return { status: 401, description: "algorithm is not accepted" };
    case "ERR_JWKS_NO_MATCHING_KEY":
    case "ERR_JWKS_MULTIPLE_MATCHING_KEYS":
      return { status: 401, description: "no matching signing key" };
    default:
      return { status: 401, description: "token is malformed" };
  }
}

function bearer(header: string): string | undefined {
  if (header.length < 8 || header.charCodeAt(6) !== 32) return undefined;
  const scheme = header.slice(0, 6);
  if (scheme !== "Bearer" && scheme.toLowerCase() !== "bearer") return undefined;
  const token = header.slice(7).trim();
  return token === "" ? undefined : token;
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
 * import { api, application, endpoint, oauth } from "@fw/application";
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
  const remote = options.jwksUrl !== undefined;
  let key: KeySource | undefined;
  let clock: Clock = systemClock;
  let cache = new TokenCache(maxTokens, ttl, tolerance);

  async function verify(token: string): Promise<AuthUser> {
    if (key === undefined) key = await keySource(options);
    const { payload } = await jose!.jwtVerify(token, key as Uint8Array, {
      issuer,
      audience,
      algorithms,
      clockTolerance: tolerance,
      currentDate: new Date(clock.now()),
    });
    const user = userFromClaims(payload);
    cache.set(token, user, payload.exp, clock.now());
    return user;
  }

  /** The values `oauth()` adds to a request's context: `{ user }`, or none. */
  const provide: ContextProvider = (req) => {
    const header = requestHeader(req, "authorization");
    if (header === null) return undefined;
    const token = bearer(header);
    if (token === undefined) return undefined;
    const values = cache.get(token, clock.now());
    if (values !== undefined) return values;
    return verify(token).then(
      (user) => ({ user }),
      (error) => {
        const failure = failureOf(error, remote);
        if (failure.status === 503) {
          logError?.("oauth(): cannot fetch the JWKS to verify a token", error);
        }
        authFailures.set(req, failure);
        return undefined;
      },
    );
  };
  // The ordinary middleware form, for hosts that do not know context providers.
  const middleware: Middleware = (req, _info, next) => {
    const values = provide(req);
    if (values === undefined) return next();
    if (!(values instanceof Promise)) return runInContext({ ...values }, next);
    return values.then((v) => v === undefined ? next() : runInContext({ ...v }, next));
  };
  contextProviders.set(middleware, provide);
  let logError: ((message: string, error: unknown) => void) | undefined;

  return {
    name: "oauth",
    verify,
    async setup(ctx: AppContext) {
      clock = ctx.clock;
      cache = new TokenCache(maxTokens, ttl, tolerance);
      logError = (message, error) => ctx.logger.error(message, { error: error as Error });
      key = await keySource(options);
      ctx.addMiddleware(middleware);
    },
  };
}
