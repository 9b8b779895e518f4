/**
 * The browser bundle of `@fw/application/client` in headless Chromium, against the client test
 * application (`application/testdata/client_app.ts`) over a real socket: unary calls of every
 * shape, a token, an SSE stream and WebSocket streams (bidirectional and client stream), all from
 * the page.
 */

import assert from "node:assert/strict";
import type { Plugin } from "@fw/runtime";
import {
  CLIENT_APP_ISSUER,
  CLIENT_APP_SECRET,
  clientApp,
} from "../application/testdata/client_app.ts";
import { signJwt } from "../application/testdata/jwt.ts";
import { Browser } from "./_cdp_browser.ts";

/** Bundles the client for browsers, as a user's build would. */
async function bundle(): Promise<string> {
  const dir = await Deno.makeTempDir({ prefix: "fw-api-client-browser-" });
  try {
    const out = `${dir}/client.js`;
    const { success, stderr } = await new Deno.Command(Deno.execPath(), {
      args: [
        "bundle",
        "--quiet",
        "--platform=browser",
        "--minify",
        "application/client.ts",
        "-o",
        out,
      ],
      cwd: new URL("..", import.meta.url).pathname,
      stdout: "null",
      stderr: "piped",
    }).output();
    assert.ok(success, new TextDecoder().decode(stderr));
    return await Deno.readTextFile(out);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
}

/** Serves an empty page at `/` and the bundle at `/client.js`. */
function page(js: string): Plugin {
  return {
    name: "page",
    warmup(ctx) {
      const serve = (path: string, body: string, type: string) =>
        ctx.addRoute({
          method: "GET",
          path,
          handler: () => new Response(body, { headers: { "content-type": type } }),
        });
      serve("/", "<!doctype html><title>client</title>", "text/html; charset=utf-8");
      serve("/client.js", js, "text/javascript; charset=utf-8");
    },
  };
}

/** What the page does with the client; every result is returned for the assertions. */
const SCRIPT = (token: string) =>
  `(async () => {
  const { apiClient, ApiStreamError } = await import("/client.js");
  const c = apiClient(location.origin);
  const out = {};
  const pick = (r) => [r.status, r.ok, r.data ?? r.error];
  out.item = pick(await c.get("/items/:id", { params: { id: 1 }, query: { fields: ["a", "b"] } }));
  out.list = pick(await c.get("/items", { query: { tags: ["hot"], limit: 2 } }));
  out.file = pick(await c.get("/files/*path", { params: { path: "a b/c.txt" } }));
  out.created = pick(await c.post("/items", { body: { name: "mug", price: 9 } }));
  out.conflict = pick(await c.post("/items", { body: { name: "mug", price: 9 } }));
  out.invalid = (await c.post("/items", { body: { name: "", price: 1 } })).error.errors[0].field;
  out.patched = pick(await c.patch("/items/:id", { params: { id: 2 }, body: { price: 7 } }));
  out.deleted = pick(await c.delete("/items/:id", { params: { id: 2 } }));
  out.missing = pick(await c.get("/items/:id", { params: { id: 2 } }));
  out.anonymous = (await c.get("/me")).status;
  const signed = apiClient(location.origin, { token: async () => "Bearer ${token}" });
  out.me = pick(await signed.get("/me"));
  out.prices = [];
  for await (const p of c.stream("GET /prices", { query: { symbol: "WEB" } })) out.prices.push(p);
  try {
    for await (const _ of c.stream("/broken")) { /* the first message, then the error event */ }
  } catch (e) {
    out.broken = [e instanceof ApiStreamError, e.status, e.body.message];
  }
  const chat = c.connect("/chat/:room", { params: { room: "lobby" } });
  chat.send({ text: "hello" });
  for await (const m of chat) {
    out.chat = m;
    chat.close();
  }
  const sum = c.connect("GET /sum");
  [4, 5, 6].forEach((n) => sum.send({ n }));
  sum.end();
  for await (const r of sum) out.sum = r;
  return out;
})()`;

Deno.test({
  name: "apiClient bundle in headless chromium: unary calls, token, SSE and WebSocket streams",
  async fn() {
    const app = clientApp().use(page(await bundle()));
    await app.start();
    const browser = await Browser.launch();
    try {
      const now = Math.floor(Date.now() / 1000);
      const token = await signJwt(
        { sub: "browser", iss: CLIENT_APP_ISSUER, aud: "client-app", iat: now, exp: now + 300 },
        { alg: "HS256", secret: CLIENT_APP_SECRET },
      );
      const tab = await browser.open(`${app.address!.url}/`);
      const out = await tab.evaluate<Record<string, unknown>>(SCRIPT(token));
      assert.deepEqual(out, {
        item: [200, true, { id: 1, name: "tea", price: 3, tags: ["hot"] }],
        list: [200, true, { tags: ["hot"], limit: 2, count: 1 }],
        file: [200, true, { path: "a b/c.txt" }],
        created: [201, true, { id: 2, name: "mug", price: 9, tags: [] }],
        conflict: [409, false, {
          statusCode: 409,
          message: 'Item "mug" exists',
          error: "Conflict",
        }],
        invalid: "body.name",
        patched: [200, true, { id: 2, name: "mug", price: 7, tags: [] }],
        deleted: [204, true, null],
        missing: [404, false, { statusCode: 404, message: "Item 2 not found", error: "Not Found" }],
        anonymous: 401,
        me: [200, true, { sub: "browser" }],
        prices: [
          { symbol: "WEB", price: 100 },
          { symbol: "WEB", price: 101 },
          { symbol: "WEB", price: 102 },
        ],
        broken: [true, 404, "The feed went away"],
        chat: { room: "lobby", echo: "HELLO" },
        sum: { sum: 15 },
      });
    } finally {
      await browser.close();
      await app.stop();
    }
  },
});
