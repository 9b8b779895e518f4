/**
 * What `oauth()` tells `.secure()` about a request whose token it could not verify. Internal.
 *
 * @module
 */

/** Why a bearer token was not accepted. */
export interface AuthFailure {
  /** 401 for a bad token, 503 when the signing keys could not be fetched. */
  readonly status: 401 | 503;
  /** A short reason for `WWW-Authenticate: Bearer error_description`. */
  readonly description: string;
}

/** Failed verifications by request, set by the `oauth()` middleware. */
export const authFailures: WeakMap<Request, AuthFailure> = new WeakMap();
