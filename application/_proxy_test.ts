import assert from "node:assert/strict";
import type { HttpSettings, RequestInfo } from "@fw/runtime";
import { clientFacts, parseForwarded } from "./_proxy.ts";
import { compileTrustProxy, parseIp } from "./_trust_proxy.ts";
import { endpoint } from "./endpoint.ts";
import { http } from "./http.ts";
import { makeApp } from "./testdata/policy_app.ts";

const server = { hostname: "127.0.0.1", port: 8000, url: "http://127.0.0.1:8000" };
const from = (hostname: string): RequestInfo => ({ remoteAddr: { hostname, port: 5000 }, server });
const settings = (trustProxy: unknown): HttpSettings => {
  const proxyTrust = compileTrustProxy(trustProxy);
  return { maxBodyBytes: 1024, trustProxy: proxyTrust !== undefined, proxyTrust };
};
const req = (headers: Record<string, string>) => new Request("http://app.test/", { headers });

Deno.test("parseIp() reads IPv4, IPv6, compressed and IPv4-mapped forms and refuses junk", () => {
  assert.deepEqual(parseIp("10.1.2.3"), parseIp("::ffff:10.1.2.3"));
  assert.deepEqual(parseIp("::1")?.[15], 1);
  assert.deepEqual(parseIp("2001:db8::1"), parseIp("2001:0db8:0:0:0:0:0:0001"));
  for (
    const bad of [
      "",
      "1.2.3",
      "256.1.1.1",
      "1::2::3",
      "abc",
      "1.2.3.4.5",
      "g::1",
      "1:2:3:4:5:6:7:8:9",
    ]
  ) {
    assert.equal(parseIp(bad), undefined, bad);
  }
});

Deno.test("compileTrustProxy() rejects bad values at start-up, naming the option and entry", () => {
  assert.throws(() => compileTrustProxy(["10.0.0.0/33"]), /option "trustProxy": "10.0.0.0\/33"/);
  assert.throws(() => compileTrustProxy("loopback, nonsense"), /"trustProxy": " nonsense"/);
  assert.throws(() => compileTrustProxy(-1), /"trustProxy": expected a non-negative hop count/);
  assert.throws(() => compileTrustProxy({}), /"trustProxy": expected a boolean/);
  assert.equal(compileTrustProxy(false), undefined);
  assert.equal(compileTrustProxy(0), undefined);
});

Deno.test("clientFacts() ignores forwarding headers from a peer outside the trusted ranges", () => {
  const http = settings(["10.0.0.0/8", "fd00::/8"]);
  const spoof = req({
    "x-forwarded-for": "1.2.3.4",
    "x-forwarded-proto": "https",
    "x-forwarded-host": "evil.test",
  });
  assert.deepEqual(clientFacts(spoof, from("203.0.113.9"), http), { address: "203.0.113.9" });
  assert.deepEqual(clientFacts(spoof, from("10.0.0.5"), http), {
    address: "1.2.3.4",
    proto: "https",
    host: "evil.test",
  });
  assert.equal(clientFacts(spoof, from("fd00::7"), http).address, "1.2.3.4");
  assert.equal(clientFacts(spoof, { server }, http).address, "unknown");
});

Deno.test("clientFacts() walks X-Forwarded-For from the right through trusted proxies only", () => {
  const http = settings("10.0.0.0/8");
  // client-written entry, the client, then two proxies of ours
  const chain = req({ "x-forwarded-for": "6.6.6.6, 198.51.100.7, 10.0.0.2, 10.0.0.3" });
  assert.equal(clientFacts(chain, from("10.0.0.4"), http).address, "198.51.100.7");
  assert.equal(clientFacts(chain, from("10.0.0.4"), settings(1)).address, "10.0.0.3");
  assert.equal(clientFacts(chain, from("10.0.0.4"), settings(3)).address, "198.51.100.7");
  assert.equal(clientFacts(chain, from("10.0.0.4"), settings(true)).address, "10.0.0.3");
  assert.equal(clientFacts(chain, from("10.0.0.4"), settings(99)).address, "6.6.6.6");
  assert.equal(clientFacts(chain, from("10.0.0.4"), settings(false)).address, "10.0.0.4");
});

Deno.test("clientFacts() takes scheme and host from the hop that named the client", () => {
  const http = settings(1);
  const prepended = req({
    "x-forwarded-for": "198.51.100.7",
    "x-forwarded-proto": "https, http",
    "x-forwarded-host": "evil.test, app.test",
  });
  assert.deepEqual(clientFacts(prepended, from("10.0.0.1"), http), {
    address: "198.51.100.7",
    proto: "http",
    host: "app.test",
  });
  const edge = req({ "x-forwarded-for": "198.51.100.7, 10.0.0.2", "x-forwarded-proto": "https" });
  assert.equal(clientFacts(edge, from("10.0.0.1"), settings(2)).proto, "https");
});

Deno.test("parseForwarded() reads RFC 7239 elements, quoted IPv6 with ports and odd input", () => {
  assert.deepEqual(
    parseForwarded(
      'for=192.0.2.60;proto=HTTPS;by=203.0.113.43, For="[2001:db8:cafe::17]:4711";host="a.test"',
    ),
    [
      { for: "192.0.2.60", proto: "https" },
      { for: "2001:db8:cafe::17", host: "a.test" },
    ],
  );
  assert.deepEqual(parseForwarded('for="a,b";proto=http'), [{ for: "a,b", proto: "http" }]);
  assert.deepEqual(parseForwarded("garbage;;=,,"), [{}]);
  assert.deepEqual(parseForwarded("for=unknown"), [{ for: "unknown" }]);
});

Deno.test("clientFacts() prefers Forwarded over X-Forwarded-* from a trusted peer", () => {
  const http = settings("loopback");
  const both = req({
    forwarded: 'for=198.51.100.7;proto=https;host=app.test, for="[::1]:9000"',
    "x-forwarded-for": "6.6.6.6",
  });
  assert.deepEqual(clientFacts(both, from("127.0.0.1"), http), {
    address: "198.51.100.7",
    proto: "https",
    host: "app.test",
  });
  assert.equal(clientFacts(both, from("192.0.2.1"), http).address, "192.0.2.1");
});

Deno.test("ctx.secured(), ctx.host() and the rate-limit key follow http({ trustProxy }) ranges", async () => {
  const facts = endpoint().rateLimit({ max: 1, windowMs: 60_000 }).handle((ctx) => ({
    secured: ctx.secured(),
    host: ctx.host(),
  }));
  const t = makeApp({ "GET /facts": facts });
  t.app.use(http({ port: 0, trustProxy: ["10.0.0.0/8"], signals: false }));
  try {
    const headers = { forwarded: "for=198.51.100.1;proto=https;host=app.test" };
    const call = (peer: string, h = headers) =>
      t.app.fetch(new Request("http://localhost/facts", { headers: h }), from(peer));
    const trusted = await call("10.1.1.1");
    assert.deepEqual(await trusted.json(), { secured: true, host: "app.test" });
    const untrusted = await call("203.0.113.5");
    assert.deepEqual(await untrusted.json(), { secured: false, host: "localhost" });
    // the same forwarded client through a trusted proxy is limited by its own address
    assert.equal((await call("10.2.2.2")).status, 429);
    const other = { forwarded: "for=198.51.100.2" };
    assert.equal((await call("10.2.2.2", other)).status, 200);
    // an untrusted peer is keyed by its own address, whatever it claims
    assert.equal((await call("203.0.113.5", other)).status, 429);
  } finally {
    await t.stop();
  }
});

Deno.test("http() names the trustProxy option for a bad CIDR at start-up", async () => {
  const t = makeApp({}, { http: { port: 0, trustProxy: ["10.0.0.0/40"] } });
  await assert.rejects(() => t.app.start(), /Invalid http\(\) option "trustProxy": "10.0.0.0\/40"/);
  await t.stop();
});
