import assert from "node:assert/strict";
import { application } from "@fw/application";
import { oauth } from "@fw/application/oauth";
import { events, getPublisher, handler, Int, topic } from "@fw/events";
import { createLogger, MemorySink } from "@fw/runtime";
import { signJwt } from "../application/testdata/jwt.ts";
import { dashboard, type DashboardOptions } from "./mod.ts";

const SECRET = "dashboard-test-secret-0123456789abcdef";
const ISS = "https://id.test";
const AUD = "ops";
const Charge = topic("dash.charge", { n: Int });

function token(claims: Record<string, unknown>): Promise<string> {
  const now = Math.floor(Date.now() / 1000);
  return signJwt(
    { iss: ISS, aud: AUD, sub: "ops-1", iat: now, exp: now + 600, ...claims },
    { alg: "HS256", secret: SECRET },
  );
}

/** An app with oauth(), the dashboard, and a handler that fails while `failing` is true. */
function makeApp(options: Partial<DashboardOptions> = {}, production = false) {
  const sink = new MemorySink();
  const state = { failing: true, handled: 0 };
  const app = application({ logger: createLogger({ sink, level: "info" }), production })
    .use(oauth({ issuer: ISS, audience: AUD, secret: SECRET }))
    .use(dashboard({ secure: { roles: ["admin"] }, ...options }))
    .use(events({
      autoScan: false,
      brokerPort: false,
      handlers: [
        handler(Charge).options({ group: "billing", maxRetries: 0 }).handle(() => {
          if (state.failing) throw new Error("card declined");
          state.handled++;
        }),
      ],
    }));
  return { app, sink, state };
}

const json = (t: string, body: unknown, extra: Record<string, string> = {}): RequestInit => ({
  method: "POST",
  headers: { authorization: `Bearer ${t}`, "content-type": "application/json", ...extra },
  body: JSON.stringify(body),
});

Deno.test("dashboard() refuses options without an explicit secure choice", () => {
  assert.throws(
    () => dashboard({} as DashboardOptions),
    /Invalid dashboard\(\) option "secure": required/,
  );
  assert.throws(
    () => dashboard({ secure: {} }),
    /"secure": name at least one role or scope/,
  );
  assert.throws(() => dashboard({ secure: false, path: "fw" }), /"path": expected a path/);
});

Deno.test("dashboard({ secure: false }) fails start-up in production, naming the option", async () => {
  const app = application({ production: true, logger: createLogger({ level: "silent" }) })
    .use(dashboard({ secure: false }));
  await assert.rejects(() => app.start(), /option "secure: false" is refused when NODE_ENV/);
});

Deno.test("dashboard API: no token 401, wrong role 403, admin 200, cross-origin POST 403", async () => {
  const { app } = makeApp();
  await app.start();
  try {
    const none = await app.request("/_fw/api/dead-letters");
    assert.equal(none.status, 401);
    assert.match(none.headers.get("www-authenticate") ?? "", /^Bearer/);
    const user = await token({ roles: ["user"] });
    const wrong = await app.request("/_fw/api/overview", {
      headers: { authorization: `Bearer ${user}` },
    });
    assert.equal(wrong.status, 403);
    assert.match((await wrong.json()).message, /Missing role "admin"/);
    const admin = await token({ roles: ["admin"] });
    const ok = await app.request("/_fw/api/overview", {
      headers: { authorization: `Bearer ${admin}` },
    });
    assert.equal(ok.status, 200);
    const cross = await app.request(
      "http://shop.test/_fw/api/dead-letters/redrive",
      json(admin, { topic: "dash.charge" }, { origin: "https://evil.test", host: "shop.test" }),
    );
    assert.equal(cross.status, 403);
    assert.match((await cross.json()).message, /Origin "https:\/\/evil.test" does not match/);
    const same = await app.request(
      "http://shop.test/_fw/api/dead-letters/redrive",
      json(admin, { topic: "dash.charge" }, { origin: "http://shop.test", host: "shop.test" }),
    );
    assert.equal(same.status, 200);
    assert.deepEqual(await same.json(), { moved: 0 });
    const unauthenticatedPost = await app.request(
      "/_fw/api/dead-letters/discard",
      { method: "POST", headers: { "content-type": "application/json" }, body: "{}" },
    );
    assert.equal(unauthenticatedPost.status, 401);
  } finally {
    await app.stop();
  }
});

Deno.test("dashboard serves its page, script and style from the module graph", async () => {
  const { app } = makeApp({ path: "/ops" });
  await app.start();
  try {
    const page = await app.request("/ops/");
    assert.equal(page.status, 200);
    assert.match(page.headers.get("content-type") ?? "", /text\/html/);
    assert.match(page.headers.get("content-security-policy") ?? "", /script-src 'self'/);
    const html = await page.text();
    assert.match(html, /<meta name="fw-base" content="\/ops">/);
    assert.match(html, /src="\/ops\/app.js"/);
    const js = await app.request("/ops/app.js");
    assert.match(js.headers.get("content-type") ?? "", /javascript/);
    assert.match(await js.text(), /text\/event-stream/);
    assert.equal((await app.request("/ops/app.css")).status, 200);
    assert.equal((await app.request("/_fw/")).status, 404);
  } finally {
    await app.stop();
  }
});

Deno.test("dashboard dead letters: list with pages and a topic filter, redrive, discard, logged with the user", async () => {
  const { app, sink, state } = makeApp();
  await app.start();
  try {
    const admin = await token({ roles: ["admin"], sub: "ada" });
    const auth = { headers: { authorization: `Bearer ${admin}` } };
    const publish = getPublisher(Charge);
    for (let n = 1; n <= 5; n++) {
      await publish({ n }, { attributes: { "auth.sub": "x", note: "n" } });
    }
    const first = await (await app.request("/_fw/api/dead-letters?limit=2", auth)).json();
    assert.equal(first.items.length, 2);
    assert.equal(first.total, 5);
    assert.equal(typeof first.next, "string");
    const item = first.items[0];
    assert.equal(item.topic, "dash.charge");
    assert.equal(item.transport, "memory");
    assert.equal(item.attempts, 1);
    assert.equal(item.error, "card declined");
    assert.deepEqual(item.payload, { n: 1 });
    assert.equal(item.attributes.note, "n");
    assert.equal(item.attributes["auth.sub"], undefined);
    assert.ok(!Number.isNaN(Date.parse(item.deadAt)));
    const second = await (await app.request(
      `/_fw/api/dead-letters?limit=2&cursor=${first.next}`,
      auth,
    )).json();
    const third = await (await app.request(
      `/_fw/api/dead-letters?limit=2&cursor=${second.next}`,
      auth,
    )).json();
    assert.deepEqual(
      [...first.items, ...second.items, ...third.items].map((i) => i.payload.n),
      [1, 2, 3, 4, 5],
    );
    assert.equal(third.next, null);
    const other = await (await app.request("/_fw/api/dead-letters?topic=other.topic", auth)).json();
    assert.deepEqual(other, { items: [], next: null, total: 0 });
    assert.equal((await app.request("/_fw/api/dead-letters?limit=0", auth)).status, 400);
    assert.equal((await app.request("/_fw/api/dead-letters?cursor=zzz", auth)).status, 400);
    const both = await app.request(
      "/_fw/api/dead-letters/redrive",
      json(admin, { ids: ["a"], topic: "dash.charge" }),
    );
    assert.equal(both.status, 400);

    const discarded = await app.request(
      "/_fw/api/dead-letters/discard",
      json(admin, { ids: [first.items[0].id] }),
    );
    assert.deepEqual(await discarded.json(), { moved: 1 });
    state.failing = false;
    const redriven = await app.request(
      "/_fw/api/dead-letters/redrive",
      json(admin, { ids: [first.items[1].id] }),
    );
    assert.deepEqual(await redriven.json(), { moved: 1 });
    const rest = await app.request(
      "/_fw/api/dead-letters/redrive",
      json(admin, { topic: "dash.charge" }),
    );
    assert.deepEqual(await rest.json(), { moved: 3 });
    assert.equal(state.handled, 4);
    const empty = await (await app.request("/_fw/api/dead-letters", auth)).json();
    assert.deepEqual(empty, { items: [], next: null, total: 0 });
    const lines = sink.records.filter((r) => r.message.startsWith("dashboard: dead letters"));
    assert.deepEqual(lines.map((r) => [r.message, r.fields.user, r.fields.moved]), [
      ["dashboard: dead letters discarded", "ada", 1],
      ["dashboard: dead letters redriven", "ada", 1],
      ["dashboard: dead letters redriven", "ada", 3],
    ]);
  } finally {
    await app.stop();
  }
});

Deno.test("dashboard overview: route rate, latency and errors; topic publishes; handler counts", async () => {
  const { app, state } = makeApp();
  await app.start();
  try {
    const admin = await token({ roles: ["admin"] });
    const auth = { headers: { authorization: `Bearer ${admin}` } };
    const publish = getPublisher(Charge);
    await publish({ n: 1 });
    state.failing = false;
    await publish({ n: 2 });
    await publish({ n: 3 });
    await app.request("/nothing-here");
    const o = await (await app.request("/_fw/api/overview", auth)).json();
    assert.deepEqual(o.topics.map((t: { topic: string; total: number }) => [t.topic, t.total]), [
      ["dash.charge", 3],
    ]);
    const h = o.handlers[0];
    assert.deepEqual(
      [h.topic, h.group, h.transport, h.success, h.failure, h.deadLettered, h.inFlight],
      ["dash.charge", "billing", "memory", 2, 1, 1, 0],
    );
    assert.deepEqual(o.deadLetters, { total: 1, byTopic: { "dash.charge": 1 } });
    const unmatched = o.routes.find((r: { route: string }) => r.route === "(no route)");
    assert.equal(unmatched.total, 1);
    assert.equal(unmatched.errorRate, 0);
    assert.ok(unmatched.p50 > 0 && unmatched.p99 >= unmatched.p50);
    assert.ok(!o.routes.some((r: { route: string }) => r.route.startsWith("/_fw")));
  } finally {
    await app.stop();
  }
});

Deno.test("dashboard stream: one SSE response sends the snapshot and the queues at once, and ends when the app stops", async () => {
  const { app } = makeApp();
  await app.start();
  try {
    const admin = await token({ roles: ["admin"] });
    const res = await app.request("/_fw/api/stream", {
      headers: { authorization: `Bearer ${admin}`, accept: "text/event-stream" },
    });
    assert.equal(res.status, 200);
    assert.match(res.headers.get("content-type") ?? "", /^text\/event-stream/);
    const reader = res.body!.pipeThrough(new TextDecoderStream()).getReader();
    let text = "";
    while (!text.includes("event: queues")) text += (await reader.read()).value ?? "";
    const event = (name: string) => {
      const block = text.split("\n\n").find((b) => b.split("\n").includes(`event: ${name}`))!;
      // each message is the view's JSON text, sent as a string
      return JSON.parse(
        JSON.parse(block.split("\n").find((l) => l.startsWith("data: "))!.slice(6)),
      );
    };
    const snapshot = event("snapshot");
    assert.equal(snapshot.overview.handlers[0].group, "billing");
    assert.deepEqual(snapshot.eventServer, { mounted: false });
    assert.deepEqual(snapshot.schedules, { available: false, items: [] });
    const queues = event("queues");
    assert.equal(queues.transports[0].kind, "memory");
    assert.equal(queues.transports[0].queues[0].group, "billing");
    // stopping the application ends the open page's stream
    await app.stop();
    while (!(await reader.read()).done);
  } finally {
    await app.stop();
  }
});
