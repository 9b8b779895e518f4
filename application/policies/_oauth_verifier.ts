/**
 * The working part of `oauth()`, loaded when the plugin is set up (or a token is first verified):
 * the key source (`npm:jose`, itself loaded on first use), token verification, the token cache
 * and the context provider. `oauth.ts` keeps the option checks, so importing `@fw/application`
 * loads none of this. Internal.
 *
 * @module
 */

import type * as Jose from "jose";
import {
  type AppContext,
  type AuthUser,
  type Clock,
  type Middleware,
  runInContext,
  systemClock,
} from "@fw/runtime";
import { invalidOAuth, nonNegative, userFromClaims } from "./_auth.ts";
import { type AuthFailure, authFailures } from "./secure.ts";
import { TokenCache } from "./_token_cache.ts";
import { type ContextProvider, contextProviders, requestHeader } from "../_dispatch.ts";

type KeySource = Parameters<typeof Jose.jwtVerify>[1];

/** The key-source options of `oauth()` (its `OAuthOptions`) that the verifier reads. */
export interface KeyOptions {
  /** URL of the issuer's JSON Web Key Set. */
  readonly jwksUrl?: string | URL;
  /** Shared secret (at least 32 bytes). */
  readonly secret?: string | Uint8Array;
  /** A public key: SPKI PEM, JWK or CryptoKey. */
  readonly publicKey?: string | JsonWebKey | CryptoKey;
  /** Accepted `alg` values (the first names the algorithm of a PEM or JWK public key). */
  readonly algorithms?: readonly string[];
  /** Remote JWKS settings, in ms. */
  readonly jwks?: {
    readonly cooldownMs?: number;
    readonly cacheMaxAgeMs?: number;
    readonly timeoutMs?: number;
  };
}

let jose: typeof Jose | undefined;

/** Loads `jose` on first use, so importing `@fw/application` does not. */
async function loadJose(): Promise<typeof Jose> {
  return jose ??= await import("jose");
}

const KEY_FAILURES = new Set(["ERR_JWKS_TIMEOUT", "ERR_JOSE_GENERIC", "ERR_JWKS_INVALID"]);

async function keySource(o: KeyOptions): Promise<KeySource> {
  const { createRemoteJWKSet, importJWK, importSPKI } = await loadJose();
  if (o.secret !== undefined) {
    const bytes = typeof o.secret === "string" ? new TextEncoder().encode(o.secret) : o.secret;
    if (!(bytes instanceof Uint8Array) || bytes.length < 32) {
      invalidOAuth(`"secret" must be at least 32 bytes`);
    }
    return bytes;
  }
  if (o.jwksUrl !== undefined) {
    let url: URL;
    try {
      url = new URL(String(o.jwksUrl));
    } catch {
      invalidOAuth(`"jwksUrl" is not a URL: "${o.jwksUrl}"`);
    }
    const j = o.jwks ?? {};
    return createRemoteJWKSet(url, {
      cooldownDuration: nonNegative(j.cooldownMs, "jwks.cooldownMs", 30_000),
      cacheMaxAge: nonNegative(j.cacheMaxAgeMs, "jwks.cacheMaxAgeMs", 600_000),
      timeoutDuration: Math.round(nonNegative(j.timeoutMs, "jwks.timeoutMs", 5_000)),
    });
  }
  const key = o.publicKey!;
  try {
    if (typeof key === "string") return await importSPKI(key, o.algorithms?.[0] ?? "RS256");
    if (key instanceof CryptoKey) return key;
    return await importJWK(key as Parameters<typeof importJWK>[0], o.algorithms?.[0]);
  } catch (error) {
    invalidOAuth(`"publicKey" cannot be imported: ${(error as Error).message}`);
  }
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

/** Settings `oauth()` checked from its options. */
export interface OAuthSettings {
  /** Expected issuers. */
  readonly issuer: string | string[];
  /** Expected audiences. */
  readonly audience: string | string[];
  /** Accepted algorithms (undefined: those of the key source). */
  readonly algorithms: string[] | undefined;
  /** Leeway for `exp` and `nbf`, in seconds. */
  readonly tolerance: number;
  /** Longest cache time of a verified token, in ms. */
  readonly ttl: number;
  /** Most cached tokens. */
  readonly maxTokens: number;
}

/** What `oauth()` delegates to this module. */
export interface OAuthVerifier {
  /** Verifies a token (the plugin's `verify`). */
  verify(token: string): Promise<AuthUser>;
  /** The plugin's setup: clock, logger and key source, then the middleware. */
  setup(ctx: AppContext): Promise<void>;
}

/**
 * Creates the verifier of one `oauth()` plugin.
 *
 * @param options The plugin's options (already checked by `oauth()`).
 * @param settings The values `oauth()` derived from them.
 * @returns The verifier.
 */
export function oauthVerifier(options: KeyOptions, settings: OAuthSettings): OAuthVerifier {
  const { issuer, audience, algorithms, tolerance, ttl, maxTokens } = settings;
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
