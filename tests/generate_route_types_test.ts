/**
 * `generate` writes `type ApiRoutes` into `.gen/api.gen.ts`: keys with the prefix the entry's
 * `api()` serves its routes under (a module path here), one per route file convention, a
 * `route.ts` as a mapped type over its method exports; the result type-checks and types a client;
 * a `generate` that does not import the entry (as `dev`'s watcher runs it) keeps the prefix.
 */

import assert from "node:assert/strict";
import { generate } from "@fw/application/cli";

const APP = new URL("../application/mod.ts", import.meta.url).href;
const CLIENT = new URL("../application/client.ts", import.meta.url).href;

const FILES: Record<string, string> = {
  "main.ts": `import { api, application, module } from "${APP}";
export const app = application({ root: import.meta.url }).use(module().path("/v1").use(api()));
`,
  "api/users/[id]/route.ts": `import { endpoint, Int } from "${APP}";
export const GET = endpoint().params({ id: Int }).returns({ id: Int }).handle((ctx) => ctx.params);
export const DELETE = endpoint().params({ id: Int }).returns(204, "Deleted").handle(() => {});
`,
  "api/files/[...rest]/get.ts": `import { endpoint } from "${APP}";
export default endpoint((ctx) => ctx.params.rest);
`,
  "api/search.post.ts": `import { endpoint } from "${APP}";
export default endpoint().body({ q: String }).returns({ hits: Number }).handle(() => ({ hits: 0 }));
`,
  "api/ticks.ws.ts": `import { endpoint, Int, Stream } from "${APP}";
export default endpoint().returns(Stream({ n: Int })).handle(async (ctx) => { await ctx.send({ n: 1 }); });
`,
  "use.ts": `import { apiClient } from "${CLIENT}";
import type { ApiRoutes } from "./.gen/api.gen.ts";
const c = apiClient<ApiRoutes>("http://x");
export async function use(): Promise<number> {
  const u = await c.get("/v1/users/:id", { params: { id: 1 } });
  const n: number = u.status === 200 ? u.data.id : 0;
  await c.delete("/v1/users/:id", { params: { id: 1 } });
  await c.get("/v1/files/*rest", { params: { rest: "a/b" } });
  const s = await c.post("/v1/search", { body: { q: "x" } });
  for await (const t of c.stream("GET /v1/ticks")) return t.n + n + (s.status === 200 ? s.data.hits : 0);
  // @ts-expect-error the prefix is part of the path
  await c.get("/users/:id", { params: { id: 1 } });
  return n;
}
`,
};

Deno.test("generate writes ApiRoutes with the module path applied, and keeps it without importing the entry", async () => {
  const dir = await Deno.makeTempDir({ prefix: "fw-route-types-" });
  try {
    for (const [path, text] of Object.entries(FILES)) {
      await Deno.mkdir(`${dir}/${path}`.replace(/\/[^/]+$/, ""), { recursive: true });
      await Deno.writeTextFile(`${dir}/${path}`, text);
    }
    await generate(`${dir}/main.ts`);
    const text = await Deno.readTextFile(`${dir}/.gen/api.gen.ts`);
    assert.match(text, /^\/\/ ApiRoutes prefixes: \["\/v1"\]$/m);
    assert.deepEqual([...text.matchAll(/^ {4}"([A-Z]+ [^"]+)"/gm)].map((m) => m[1]), [
      "GET /v1/files/*rest",
      "POST /v1/search",
      "GET /v1/ticks",
    ]);
    assert.match(text, /\[K in keyof typeof \$3 & Method as `\$\{K\} \/v1\/users\/:id`\]/);

    const check = await new Deno.Command(Deno.execPath(), {
      args: ["check", `${dir}/use.ts`],
      stdout: "piped",
      stderr: "piped",
    }).output();
    assert.ok(check.success, new TextDecoder().decode(check.stderr));

    const { changed } = await generate(`${dir}/main.ts`, { openapi: false });
    assert.deepEqual(changed, [], "the watcher's generate keeps the recorded prefix");
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});
