import assert from "node:assert/strict";
import { type AuthUser, ManualClock, useContext } from "@fw/runtime";
import { endpoint } from "../endpoint.ts";
import { oauth, type OAuthOptions } from "./oauth.ts";
import {
  b64url,
  ecKeys,
  publicJwk,
  rsaKeys,
  type Signer,
  signJwt,
  spkiPem,
} from "../testdata/jwt.ts";
import { get, makeApp, serve } from "../testdata/policy_app.ts";

const SECRET = "test-secret-with-at-least-32-bytes!";
const ISS = "https://id.example";
const AUD = "orders-api";
const HS: Signer = { alg: "HS256", secret: SECRET };
const NOW = 1_800_000_000; // seconds

const me = endpoint().secure().handle(() => useContext<{ user: AuthUser }>().user.sub ?? "");

function claims(extra: Record<string, unknown> = {}, now = NOW): Record<string, unknown> {
  return { iss: ISS, aud: AUD, sub: "user-1", iat: now, exp: now + 600, ...extra };
}

async function status(
  app: { request(p: string, i?: RequestInit): Promise<Response> },
  jwt: string,
) {
  const res = await app.request("/me", { headers: { authorization: `Bearer ${jwt}` } });
  return { status: res.status, auth: res.headers.get("www-authenticate"), body: await res.text() };
}

function appWith(options: Partial<OAuthOptions>, clock = new ManualClock(NOW * 1000)) {
  const plugin = oauth({ issuer: ISS, audience: AUD, ...options } as OAuthOptions);
  return makeApp({ "GET /me": me }, { plugins: [plugin], clock }).app;
}

Deno.test("oauth() refuses forged, wrongly signed, alg none, wrong-audience and wrong-issuer tokens", async () => {
  const app = appWith({ secret: SECRET });
  const valid = await signJwt(claims(), HS);
  assert.equal((await status(app, valid)).status, 200);

  const [h, p, s] = valid.split(".");
  const forgedPayload = b64url(JSON.stringify(claims({ sub: "admin" })));
  const cases: Record<string, [string, string]> = {
    forged: [`${h}.${forgedPayload}.${s}`, "signature is invalid"],
    "other secret": [
      await signJwt(claims(), { alg: "HS256", secret: "another-secret-of-at-least-32-bytes" }),
      "signature is invalid",
    ],
    "alg none": [await signJwt(claims(), { alg: "none" }), "algorithm is not accepted"],
    "wrong audience": [
      await signJwt(claims({ aud: "billing" }), HS),
      'claim "aud" is not accepted',
    ],
    "wrong issuer": [
      await signJwt(claims({ iss: "https://evil.example" }), HS),
      'claim "iss" is not accepted',
    ],
    "not yet valid": [await signJwt(claims({ nbf: NOW + 60 }), HS), 'claim "nbf" is not accepted'],
    malformed: [`${h}.${p}`, "token is malformed"],
    "RS256 with a secret": [
      await signJwt(claims(), { alg: "RS256", privateKey: (await rsaKeys()).privateKey }),
      "algorithm is not accepted",
    ],
  };
  for (const [name, [jwt, reason]] of Object.entries(cases)) {
    const res = await status(app, jwt);
    assert.equal(res.status, 401, name);
    assert.equal(
      res.auth,
      `Bearer error="invalid_token", error_description="${reason.replaceAll('"', "")}"`,
      name,
    );
    assert.equal(JSON.parse(res.body).message, `Invalid token: ${reason}`, name);
  }
});

Deno.test("oauth() refuses a token once it expires, even when it was cached", async () => {
  const clock = new ManualClock(NOW * 1000);
  const app = appWith({ secret: SECRET }, clock);
  const jwt = await signJwt(claims({ exp: NOW + 60 }), HS);
  assert.equal((await status(app, jwt)).status, 200);
  await clock.advance(30_000);
  assert.equal((await status(app, jwt)).status, 200);
  await clock.advance(30_000);
  const expired = await status(app, jwt);
  assert.equal(expired.status, 401);
  assert.equal(JSON.parse(expired.body).message, "Invalid token: token expired");
});

Deno.test("oauth() verifies RS256 with a PEM public key and ES256 with a JWK", async () => {
  const rsa = await rsaKeys();
  const rsApp = appWith({ publicKey: await spkiPem(rsa.publicKey), algorithms: ["RS256"] });
  const rs = await signJwt(claims(), { alg: "RS256", privateKey: rsa.privateKey });
  assert.deepEqual(await status(rsApp, rs), { status: 200, auth: null, body: "user-1" });
  const otherRsa = await rsaKeys();
  const wrongKey = await signJwt(claims(), { alg: "RS256", privateKey: otherRsa.privateKey });
  assert.equal((await status(rsApp, wrongKey)).status, 401);

  const ec = await ecKeys();
  const ecApp = appWith({ publicKey: await publicJwk(ec.publicKey, "k1", "ES256") });
  const es = await signJwt(claims(), { alg: "ES256", privateKey: ec.privateKey });
  assert.equal((await status(ecApp, es)).status, 200);
  // an HS256 token "signed" with the public key bytes (algorithm confusion) is refused
  const confused = await signJwt(claims(), {
    alg: "HS256",
    secret: JSON.stringify(await publicJwk(ec.publicKey, "k1", "ES256")),
  });
  assert.equal((await status(ecApp, confused)).status, 401);
});

/** A JWKS endpoint on a real socket whose keys can be swapped. */
function jwksServer() {
  let keys: JsonWebKey[] = [];
  let fetches = 0;
  let down = false;
  const server = Deno.serve({ port: 0, hostname: "127.0.0.1", onListen() {} }, () => {
    fetches++;
    if (down) return new Response("unavailable", { status: 503 });
    return Response.json({ keys });
  });
  return {
    url: `http://127.0.0.1:${server.addr.port}/.well-known/jwks.json`,
    setKeys: (k: JsonWebKey[]) => void (keys = k),
    setDown: (d: boolean) => void (down = d),
    get fetches() {
      return fetches;
    },
    close: () => server.shutdown(),
  };
}

Deno.test("oauth({ jwksUrl }) fetches and caches the key set and follows key rotation", async () => {
  const jwks = jwksServer();
  const a = await rsaKeys();
  const b = await rsaKeys();
  jwks.setKeys([await publicJwk(a.publicKey, "key-a", "RS256")]);
  const now = Math.floor(Date.now() / 1000);
  const t = await serve({ "GET /me": me }, {
    plugins: [oauth({ issuer: ISS, audience: AUD, jwksUrl: jwks.url, jwks: { cooldownMs: 0 } })],
  });
  const call = (jwt: string) => get(`${t.url}/me`, { headers: { authorization: `Bearer ${jwt}` } });
  try {
    const signA = (sub: string) =>
      signJwt(claims({ sub }, now), { alg: "RS256", privateKey: a.privateKey, kid: "key-a" });
    const signB = (sub: string) =>
      signJwt(claims({ sub }, now), { alg: "RS256", privateKey: b.privateKey, kid: "key-b" });

    assert.deepEqual([(await call(await signA("u1"))).body, (await call(await signA("u2"))).body], [
      "u1",
      "u2",
    ]);
    assert.equal(jwks.fetches, 1, "the key set is fetched once and cached");

    // rotation: the issuer now signs with key B only
    jwks.setKeys([await publicJwk(b.publicKey, "key-b", "RS256")]);
    const rotated = await call(await signB("u3"));
    assert.equal(rotated.status, 200);
    assert.equal(rotated.body, "u3");
    assert.equal(jwks.fetches, 2, "an unknown key id triggers one new fetch");

    // a new token signed with the retired key is refused
    const retired = await call(await signA("u4"));
    assert.equal(retired.status, 401);
    assert.match(retired.headers.get("www-authenticate")!, /no matching signing key/);

    // the key set cannot be fetched: 503, not a misleading 401
    jwks.setDown(true);
    const c = await rsaKeys();
    const unknown = await signJwt(claims({}, now), {
      alg: "RS256",
      privateKey: c.privateKey,
      kid: "key-c",
    });
    const down = await call(unknown);
    assert.equal(down.status, 503);
    assert.ok(t.sink.records.some((r) => r.level === "error" && /JWKS/.test(r.message)));
  } finally {
    await t.stop();
    await jwks.close();
  }
});

Deno.test("oauth() verify() checks a token outside HTTP", async () => {
  const plugin = oauth({ issuer: ISS, audience: AUD, secret: SECRET });
  const app = makeApp({}, { plugins: [plugin] }).app;
  await app.warmup();
  const now = Math.floor(Date.now() / 1000);
  const user = await plugin.verify(
    await signJwt(claims({ scope: "a b", roles: ["r"], email: "e@x.io" }, now), HS),
  );
  assert.deepEqual({ ...user, claims: undefined }, {
    sub: "user-1",
    email: "e@x.io",
    azp: undefined,
    client_id: undefined,
    scopes: ["a", "b"],
    roles: ["r"],
    claims: undefined,
  });
  await assert.rejects(plugin.verify("x.y.z"));
});

Deno.test("oauth() rejects configuration mistakes at start-up", async () => {
  const base = { issuer: ISS, audience: AUD };
  // deno-lint-ignore no-explicit-any
  const make = (o: any) => () => oauth(o);
  assert.throws(make({ audience: AUD, secret: SECRET }), /"issuer"/);
  assert.throws(make({ issuer: ISS, secret: SECRET }), /"audience"/);
  assert.throws(make(base), /exactly one of "jwksUrl", "secret" or "publicKey" \(got none\)/);
  assert.throws(
    make({ ...base, secret: SECRET, jwksUrl: "https://id.example/jwks" }),
    /got "jwksUrl", "secret"/,
  );
  assert.throws(make({ ...base, secret: SECRET, algorithms: ["none"] }), /"none"/);
  assert.throws(make({ ...base, secret: SECRET, cacheTtlMs: -1 }), /"cacheTtlMs"/);
  const short = makeApp({}, { plugins: [oauth({ ...base, secret: "short" })] }).app;
  await assert.rejects(short.warmup(), /"secret" must be at least 32 bytes/);
  const badUrl = makeApp({}, { plugins: [oauth({ ...base, jwksUrl: "not a url" })] }).app;
  await assert.rejects(badUrl.warmup(), /"jwksUrl" is not a URL/);
  const badKey = makeApp({}, { plugins: [oauth({ ...base, publicKey: "-----BEGIN" })] }).app;
  await assert.rejects(badKey.warmup(), /"publicKey" cannot be imported/);
});

Deno.test("oauth() middleware form sets user for hosts without context providers", async () => {
  const plugin = oauth({ issuer: ISS, audience: AUD, secret: SECRET });
  const { app } = makeApp({});
  const middlewares: import("@fw/runtime").Middleware[] = [];
  // a host that only knows the ordinary middleware chain
  await plugin.setup!({ ...app.context, addMiddleware: (mw) => void middlewares.push(mw) });
  const [mw] = middlewares;
  const now = Math.floor(Date.now() / 1000);
  const jwt = await signJwt(claims({ sub: "plain-host" }, now), HS);
  const seen: (string | undefined)[] = [];
  const next = () => {
    seen.push(useContext<{ user?: AuthUser }>().user?.sub);
    return Promise.resolve(new Response(null, { status: 204 }));
  };
  const request = (auth?: string) =>
    new Request("http://localhost/", { headers: auth ? { authorization: auth } : {} });
  const info = { server: { hostname: "localhost", port: 0, url: "http://localhost" } };
  await mw(request(`Bearer ${jwt}`), info, next); // verified
  await mw(request(`bearer ${jwt}`), info, next); // cached; the scheme is case-insensitive
  await import("@fw/runtime").then(({ runInContext }) =>
    runInContext({}, () => mw(request("Bearer x.y.z"), info, next))
  );
  assert.deepEqual(seen, ["plain-host", "plain-host", undefined]);
});
