/**
 * Mints an admin token for the shop, signed with `SHOP_JWT_SECRET` (HS256), so you can call the
 * admin routes in development:
 *
 * ```sh
 * export SHOP_JWT_SECRET=dev-only-shop-secret-0123456789abcdef
 * TOKEN=$(deno run --allow-env examples/shop/src/token.ts)
 * curl -H "authorization: Bearer $TOKEN" localhost:8000/admin/dead-letters
 * ```
 *
 * In production, tokens come from your identity provider; point `oauth()` at its JWKS instead.
 *
 * @module
 */

import { ADMIN_SCOPE, loadConfig } from "./config.ts";

const enc = new TextEncoder();

function b64url(bytes: Uint8Array): string {
  let bin = "";
  for (const b of bytes) bin += String.fromCharCode(b);
  return btoa(bin).replace(/\+/g, "-").replace(/\//g, "_").replace(/=+$/, "");
}

/** What goes into a token. */
export interface TokenOptions {
  /** HS256 secret. */
  secret: string;
  /** `iss`. */
  issuer: string;
  /** `aud`. */
  audience: string;
  /** `sub` (default `admin`). */
  subject?: string;
  /** Space-separated scopes (default the admin scope). */
  scope?: string;
  /** Lifetime in seconds (default 3600). */
  ttlSec?: number;
}

/** Signs an HS256 JWT with WebCrypto. */
export async function signToken(o: TokenOptions): Promise<string> {
  const now = Math.floor(Date.now() / 1000);
  const claims = {
    iss: o.issuer,
    aud: o.audience,
    sub: o.subject ?? "admin",
    scope: o.scope ?? ADMIN_SCOPE,
    iat: now,
    exp: now + (o.ttlSec ?? 3600),
  };
  const header = b64url(enc.encode(JSON.stringify({ alg: "HS256", typ: "JWT" })));
  const input = `${header}.${b64url(enc.encode(JSON.stringify(claims)))}`;
  const key = await crypto.subtle.importKey(
    "raw",
    enc.encode(o.secret),
    { name: "HMAC", hash: "SHA-256" },
    false,
    ["sign"],
  );
  const sig = new Uint8Array(await crypto.subtle.sign("HMAC", key, enc.encode(input)));
  return `${input}.${b64url(sig)}`;
}

if (import.meta.main) {
  const config = loadConfig();
  console.log(
    await signToken({
      secret: config.jwtSecret,
      issuer: config.jwtIssuer,
      audience: config.jwtAudience,
    }),
  );
}
