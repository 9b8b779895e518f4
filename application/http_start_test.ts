import assert from "node:assert/strict";
import { api } from "./api.ts";
import { application } from "./application.ts";
import { endpoint } from "./endpoint.ts";
import { http } from "./http.ts";

Deno.test("http() holds requests that arrive before the plugins used after it have started, then answers them", async () => {
  let busUp = false;
  const release = Promise.withResolvers<void>();
  const app = application()
    .use(http({ port: 0, hostname: "127.0.0.1", signals: false }))
    // stands in for events(): its start() comes after http() began listening
    .use({ name: "slow-bus", start: async () => void (await release.promise, busUp = true) })
    .use(
      api({ autoScan: false }).route("GET", "/ready", endpoint().handle(() => ({ busUp }))),
    );
  const starting = app.start();
  while (app.address === undefined) await new Promise((r) => setTimeout(r, 5));
  const answer = fetch(`${app.address.url}/ready`).then(async (res) => ({
    status: res.status,
    body: await res.json(),
  }));
  // give the request time to reach the server while the plugin is still starting: without the
  // hold, the handler would answer { busUp: false } now
  await new Promise((r) => setTimeout(r, 200));
  release.resolve();
  await starting;
  assert.deepEqual(await answer, { status: 200, body: { busUp: true } });
  await app.stop();
});

Deno.test("http() lets held requests go on when the start fails and the application stops", async () => {
  const app = application()
    .use(http({ port: 0, hostname: "127.0.0.1", signals: false }))
    .use({
      name: "broken",
      start: () => new Promise<void>((_, reject) => setTimeout(() => reject(new Error("no")), 300)),
    })
    .use(api({ autoScan: false }).route("GET", "/x", endpoint().handle(() => ({ ok: true }))));
  const starting = app.start();
  while (app.address === undefined) await new Promise((r) => setTimeout(r, 5));
  const answer = fetch(`${app.address.url}/x`).then(async (res) => {
    await res.body?.cancel();
    return res.status;
  });
  await assert.rejects(starting, /no/);
  await app.stop();
  assert.equal(typeof await answer, "number", "the held request is answered, not left hanging");
});
