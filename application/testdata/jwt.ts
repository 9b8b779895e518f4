/**
 * A small JWT signer for tests and benchmarks, on WebCrypto (independent of the verifier): HS256,
 * RS256 and ES256 tokens, unsigned `alg: none` tokens, and JWKS documents.
 *
 * @module
 */

const enc = new TextEncoder();

/** base64url of bytes or of a string. */
export function b64url(data: Uint8Array | string): string {
  const bytes = typeof data === "string" ? enc.encode(data) : data;
  let bin = "";
  for (const b of bytes) bin += String.fromCharCode(b);
  return btoa(bin).replace(/\+/g, "-").replace(/\//g, "_").replace(/=+$/, "");
}

/** How to sign. */
export type Signer =
  | { alg: "HS256"; secret: string }
  | { alg: "RS256" | "ES256"; privateKey: CryptoKey; kid?: string }
  | { alg: "none" };

/** Signs `claims` (numbers for `iat`/`exp` are seconds). */
export async function signJwt(claims: Record<string, unknown>, signer: Signer): Promise<string> {
  const header: Record<string, string> = { alg: signer.alg, typ: "JWT" };
  if ("kid" in signer && signer.kid) header.kid = signer.kid;
  const input = `${b64url(JSON.stringify(header))}.${b64url(JSON.stringify(claims))}`;
  if (signer.alg === "none") return `${input}.`;
  let sig: ArrayBuffer;
  if (signer.alg === "HS256") {
    const key = await crypto.subtle.importKey(
      "raw",
      enc.encode(signer.secret),
      { name: "HMAC", hash: "SHA-256" },
      false,
      ["sign"],
    );
    sig = await crypto.subtle.sign("HMAC", key, enc.encode(input));
  } else if (signer.alg === "RS256") {
    sig = await crypto.subtle.sign("RSASSA-PKCS1-v1_5", signer.privateKey, enc.encode(input));
  } else {
    sig = await crypto.subtle.sign(
      { name: "ECDSA", hash: "SHA-256" },
      signer.privateKey,
      enc.encode(input),
    );
  }
  return `${input}.${b64url(new Uint8Array(sig))}`;
}

/** A new RS256 key pair. */
export function rsaKeys(): Promise<CryptoKeyPair> {
  return crypto.subtle.generateKey(
    {
      name: "RSASSA-PKCS1-v1_5",
      modulusLength: 2048,
      publicExponent: new Uint8Array([1, 0, 1]),
      hash: "SHA-256",
    },
    true,
    ["sign", "verify"],
  );
}

/** A new ES256 key pair. */
export function ecKeys(): Promise<CryptoKeyPair> {
  return crypto.subtle.generateKey({ name: "ECDSA", namedCurve: "P-256" }, true, [
    "sign",
    "verify",
  ]);
}

/** The public JWK of a key, with its `kid` and `alg`. */
export async function publicJwk(key: CryptoKey, kid: string, alg: string): Promise<JsonWebKey> {
  const jwk = await crypto.subtle.exportKey("jwk", key);
  return { ...jwk, kid, alg, use: "sig", key_ops: undefined, ext: undefined } as JsonWebKey;
}

/** The SPKI PEM of a public key. */
export async function spkiPem(key: CryptoKey): Promise<string> {
  const der = new Uint8Array(await crypto.subtle.exportKey("spki", key));
  let bin = "";
  for (const b of der) bin += String.fromCharCode(b);
  const lines = btoa(bin).match(/.{1,64}/g)!.join("\n");
  return `-----BEGIN PUBLIC KEY-----\n${lines}\n-----END PUBLIC KEY-----\n`;
}
