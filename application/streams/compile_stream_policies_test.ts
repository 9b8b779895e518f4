import assert from "node:assert/strict";
import { type AuthUser, Int, Stream, useContext } from "@fw/runtime";
import { endpoint } from "../endpoint.ts";
import { oauth } from "../policies/oauth.ts";
import { signJwt } from "../testdata/jwt.ts";
import { get, serve, type TestServer } from "../testdata/policy_app.ts";
import { rawUpgrade, SseReader, WsClient } from "../testdata/stream_clients.ts";

const SECRET = "test-secret-with-at-least-32-bytes!";
const ISS = "https://id.example";
const AUD = "feed";
const APP = "https://app.example";

function token(sub: string): Promise<string> {
  const now = Math.floor(Date.now() / 1000);
  return signJwt({ iss: ISS, aud: AUD, sub, exp: now + 600 }, { alg: "HS256", secret: SECRET });
}

const Tick = { n: Int, sub: String };

/** Sends two ticks naming the caller, then ends. */
async function sendTicks(ctx: { send(t: { n: number; sub: string }): Promise<void> }) {
  const sub = useContext<{ user?: AuthUser }>().user?.sub ?? "anonymous";
  for (let n = 1; n <= 2; n++) await ctx.send({ n, sub });
}
const ticks = () => endpoint().returns(Stream(Tick));

async function start(): Promise<TestServer> {
  return await serve({
    "GET /secure": ticks().secure().handle(sendTicks),
    "GET /limited": ticks().rateLimit({ max: 1, windowMs: 60_000 }).handle(sendTicks),
    "GET /cors": ticks().cors({ origin: APP }).handle(sendTicks),
  }, { plugins: [oauth({ issuer: ISS, audience: AUD, secret: SECRET })] });
}

const port = (t: TestServer) => Number(new URL(t.url).port);
const sse = { accept: "text/event-stream" };

async function events(res: Response): Promise<unknown[]> {
  const reader = new SseReader(res);
  const out = [];
  for (let e = await reader.nextEvent(); e; e = await reader.nextEvent()) out.push(e.data);
  return out;
}

Deno.test("stream .secure(): SSE and WebSocket upgrade answer 401 before streaming", async () => {
  const t = await start();
  try {
    const refused = await get(`${t.url}/secure`, { headers: sse });
    assert.equal(refused.status, 401);
    assert.equal(refused.headers.get("www-authenticate"), "Bearer");
    assert.equal(JSON.parse(refused.body).message, "Authentication required");

    const jwt = await token("ann");
    const ok = await fetch(`${t.url}/secure`, {
      headers: { ...sse, authorization: `Bearer ${jwt}` },
    });
    assert.equal(ok.status, 200);
    assert.deepEqual(await events(ok), ['{"n":1,"sub":"ann"}', '{"n":2,"sub":"ann"}']);

    const upgrade = await rawUpgrade(port(t), "/secure");
    assert.equal(upgrade.status, 401);
    assert.match(upgrade.head, /www-authenticate: bearer/);
    const bad = await rawUpgrade(port(t), "/secure", { authorization: "Bearer forged.x.y" });
    assert.equal(bad.status, 401);
    assert.match(bad.head, /error="invalid_token"/);

    const ws = await WsClient.connect(`${t.url.replace("http", "ws")}/secure`, undefined, {
      authorization: `Bearer ${jwt}`,
    });
    const { messages, code } = await ws.rest();
    assert.deepEqual(messages, [{ n: 1, sub: "ann" }, { n: 2, sub: "ann" }]);
    assert.equal(code, 1000);
  } finally {
    await t.stop();
  }
});

Deno.test("stream .rateLimit(): the request over the limit gets 429 instead of a stream", async () => {
  const t = await start();
  try {
    const first = await fetch(`${t.url}/limited`, { headers: sse });
    assert.equal(first.status, 200);
    assert.equal(first.headers.get("ratelimit-remaining"), "0");
    assert.equal((await events(first)).length, 2);
    const second = await get(`${t.url}/limited`, { headers: sse });
    assert.equal(second.status, 429);
    assert.ok(Number(second.headers.get("retry-after")) > 0);
    const upgrade = await rawUpgrade(port(t), "/limited");
    assert.equal(upgrade.status, 429);
    assert.match(upgrade.head, /retry-after: \d+/);
  } finally {
    await t.stop();
  }
});

Deno.test("stream .cors(): allowed origins stream with CORS headers, others get 403", async () => {
  const t = await start();
  try {
    const ok = await fetch(`${t.url}/cors`, { headers: { ...sse, origin: APP } });
    assert.equal(ok.status, 200);
    assert.equal(ok.headers.get("access-control-allow-origin"), APP);
    assert.equal((await events(ok)).length, 2);

    const evil = await get(`${t.url}/cors`, {
      headers: { ...sse, origin: "https://evil.example" },
    });
    assert.equal(evil.status, 403);
    assert.notEqual(evil.headers.get("access-control-allow-origin"), "https://evil.example");
    assert.equal(JSON.parse(evil.body).message, 'Origin "https://evil.example" is not allowed');

    const hijack = await rawUpgrade(port(t), "/cors", { origin: "https://evil.example" });
    assert.equal(hijack.status, 403);
    const allowed = await rawUpgrade(port(t), "/cors", { origin: APP });
    assert.equal(allowed.status, 101);
    const sameSite = await rawUpgrade(port(t), "/cors", { origin: t.url });
    assert.equal(sameSite.status, 101);
    const noOrigin = await rawUpgrade(port(t), "/cors");
    assert.equal(noOrigin.status, 101);
  } finally {
    await t.stop();
  }
});
