/**
 * Shared settings of bench scenario (e): the CORS origin, the OAuth issuer/audience/secret and a
 * valid HS256 token that `wrk` sends with every request.
 *
 * @module
 */

import { signJwt } from "../application/testdata/jwt.ts";

/** The allowed CORS origin (sent as `Origin`). */
export const BENCH_ORIGIN = "https://app.example";
/** Token issuer. */
export const BENCH_ISSUER = "https://id.example";
/** Token audience. */
export const BENCH_AUDIENCE = "bench-api";
/** HS256 secret. */
export const BENCH_SECRET = "bench-secret-with-at-least-32-bytes!!";

/** A token valid for a day. */
export function benchToken(): Promise<string> {
  const now = Math.floor(Date.now() / 1000);
  return signJwt(
    { iss: BENCH_ISSUER, aud: BENCH_AUDIENCE, sub: "bench-user", iat: now, exp: now + 86_400 },
    { alg: "HS256", secret: BENCH_SECRET },
  );
}
