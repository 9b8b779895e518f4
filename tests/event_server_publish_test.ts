/**
 * `POST /events/publish` and the discovery document of eventServer(), through app.fetch (no
 * socket): typed outcomes and statuses, idempotent retries, traceparent into the handler
 * context, oauth() users with the access rule, and start-up errors (issue 14).
 */
import assert from "node:assert/strict";
import { application } from "@fw/application";
import { oauth } from "@fw/application/oauth";
import {
  type EventContext,
  events,
  getPublisher,
  handler,
  Int,
  memoryRealtime,
  Optional,
  topic,
  useContext,
} from "@fw/events";
import { validateProtocolValue } from "@fw/events/protocol";
import { eventServer, type EventServerOptions } from "@fw/events/server";
import { createLogger, ManualClock, MemorySink } from "@fw/runtime";
import { signJwt } from "../application/testdata/jwt.ts";

const Orders = topic("orders.created", { n: Int, note: Optional(String) }, {
  channel: "orders",
  version: "1",
});
const Admin = topic("admin.notice", { n: Int });
const SECRET = "s".repeat(32);
const logger = createLogger({ level: "error" });

function makeApp(options: Partial<EventServerOptions> = {}) {
  return application({ logger })
    .use(oauth({ issuer: "https://id.test", audience: "events", secret: SECRET }))
    .use(eventServer({
      topics: [Orders, Admin],
      access: (user, name) => name !== Admin.name || (user?.roles.includes("admin") ?? false),
      ...options,
    }));
}

function token(claims: Record<string, unknown>): Promise<string> {
  const now = Math.floor(Date.now() / 1000);
  return signJwt(
    { iss: "https://id.test", aud: "events", iat: now, exp: now + 600, ...claims },
    { alg: "HS256", secret: SECRET },
  );
}

function post(body: unknown, headers: Record<string, string> = {}): RequestInit {
  return {
    method: "POST",
    headers: { "content-type": "application/json", ...headers },
    body: typeof body === "string" ? body : JSON.stringify(body),
  };
}

Deno.test("eventServer() publish: accepted, then a byte-identical retry is accepted once with duplicate true", async () => {
  const realtime = memoryRealtime();
  const app = makeApp({ realtime });
  const seen: unknown[] = [];
  const sub = await realtime.subscribe(Orders, (m) => void seen.push(m.payload));
  try {
    const body = { id: "m-1", topic: "orders.created", payload: { n: 1 } };
    const first = await app.request("/events/publish", post(body));
    assert.equal(first.status, 200);
    const a = await first.json();
    assert.deepEqual(validateProtocolValue("publish-response", a), []);
    assert.equal(a.outcome, "accepted");
    assert.equal(a.duplicate, false);
    const again = await (await app.request("/events/publish", post(body))).json();
    assert.deepEqual(again, { ...a, duplicate: true });
    assert.deepEqual(seen, [{ n: 1 }]);
    const conflict = await app.request(
      "/events/publish",
      post({ ...body, payload: { n: 2 } }),
    );
    assert.equal(conflict.status, 409);
    assert.deepEqual(await conflict.json(), {
      outcome: "permanent",
      code: "conflict",
      message: 'Message id "m-1" was already published with a different body',
      id: "m-1",
    });
    // Same JSON, other bytes (a space): not byte-identical, so a conflict too.
    const spaced = await app.request("/events/publish", post(JSON.stringify(body, null, 1)));
    assert.equal(spaced.status, 409);
    assert.deepEqual(seen, [{ n: 1 }]);
  } finally {
    await sub.close();
    await app.stop();
    await realtime.close();
  }
});

Deno.test("eventServer() publish: permanent outcomes with their statuses and codes", async () => {
  const app = makeApp();
  const cases: [RequestInit, number, string, string?][] = [
    [post({ id: "x", topic: "orders.created", payload: { n: "one" } }), 400, "invalid_payload"],
    [post({ id: "x", topic: "nope.nope", payload: { n: 1 } }), 404, "unknown_topic"],
    [post("{"), 400, "invalid_request"],
    [post({ topic: "orders.created", payload: {} }), 400, "invalid_request"],
    [
      post({ id: "x", topic: "orders.created", payload: { n: 1 }, version: "2" }),
      400,
      "invalid_request",
    ],
    [{ ...post({}), headers: { "content-type": "text/plain" } }, 415, "unsupported_media_type"],
    [
      post({ id: "x", topic: "orders.created", payload: { n: 1, note: "x".repeat(300) } }),
      413,
      "too_large",
    ],
    [post({ id: "x", topic: "admin.notice", payload: { n: 1 } }), 401, "unauthorized"],
  ];
  try {
    for (const [init, status, code] of cases) {
      const res = await makeLimited(app, init);
      const body = await res.json();
      assert.equal(res.status, status, JSON.stringify(body));
      assert.equal(body.code, code);
      assert.equal(body.outcome, "permanent");
      assert.deepEqual(validateProtocolValue("http-error", body), []);
      if (status === 401) assert.equal(res.headers.get("www-authenticate"), "Bearer");
    }
    const invalid = await (await app.request(
      "/events/publish",
      post({ id: "x", topic: "orders.created", payload: { n: "one" } }),
    )).json();
    assert.deepEqual(invalid.errors, [{
      field: "payload.n",
      message: "payload.n must be an integer",
    }]);
  } finally {
    await app.stop();
  }
});

const limited = makeApp({ maxPublishBytes: 256 });
function makeLimited(_app: unknown, init: RequestInit): Promise<Response> {
  return limited.request("/events/publish", init);
}

Deno.test("eventServer() publish: the oauth() user and the access rule decide (401, 403, 200 with auth.* attributes)", async () => {
  const app = makeApp({ forwardToHandlers: true });
  const body = { id: "adm-1", topic: "admin.notice", payload: { n: 1 } };
  try {
    const user = await token({ sub: "u1", roles: ["user"] });
    const forbidden = await app.request(
      "/events/publish",
      post(body, { authorization: `Bearer ${user}` }),
    );
    assert.equal(forbidden.status, 403);
    assert.equal((await forbidden.json()).code, "forbidden");
    const admin = await token({ sub: "a1", roles: ["admin"] });
    const ok = await app.request(
      "/events/publish",
      post(body, { authorization: `Bearer ${admin}` }),
    );
    assert.equal(ok.status, 200);
    const bad = await app.request("/events/publish", post(body, { authorization: "Bearer nope" }));
    assert.equal(bad.status, 401);
  } finally {
    await app.stop();
    await limited.stop();
  }
});

Deno.test("eventServer() publish: traceparent becomes the trace id of the response and of the handler's context", async () => {
  const seen: { traceId: string; messageId: string; attributes: Record<string, string> }[] = [];
  const app = application({ logger })
    .use(oauth({ issuer: "https://id.test", audience: "events", secret: SECRET }))
    .use(events({
      autoScan: false,
      brokerPort: false,
      handlers: [
        handler(Orders).handle((msg) => {
          const ctx = useContext<EventContext>();
          seen.push({
            traceId: ctx.traceId,
            messageId: ctx.eventMessageId,
            attributes: msg.attributes,
          });
        }),
      ],
    }))
    .use(eventServer({ topics: [Orders] }));
  await app.start();
  try {
    const trace = "4bf92f3577b34da6a3ce929d0e0e4736";
    const user = await token({ sub: "u7", email: "u7@example.com" });
    const res = await app.request(
      "/events/publish",
      post(
        {
          id: "t-1",
          topic: "orders.created",
          payload: { n: 5 },
          attributes: { source: "web", "auth.sub": "spoofed" },
        },
        { traceparent: `00-${trace}-00f067aa0ba902b7-01`, authorization: `Bearer ${user}` },
      ),
    );
    assert.equal(res.status, 200);
    assert.equal((await res.json()).traceId, trace);
    for (let i = 0; i < 100 && seen.length === 0; i++) await new Promise((r) => setTimeout(r, 5));
    assert.deepEqual(seen, [{
      traceId: trace,
      messageId: "t-1",
      attributes: { source: "web", "auth.sub": "u7", "auth.email": "u7@example.com" },
    }]);
  } finally {
    await app.stop();
  }
});

Deno.test("eventServer() publish: forwards to the handlers of its own application, not to another app started later in the process", async () => {
  const seen: string[] = [];
  const plugin = (name: string) =>
    events({
      autoScan: false,
      brokerPort: false,
      handlers: [
        handler(Orders).options({ group: name }).handle((m) =>
          void seen.push(`${name}:${m.payload.n}`)
        ),
      ],
    });
  const own = application({ logger }).use(plugin("own")).use(eventServer({ topics: [Orders] }));
  const otherEvents = plugin("other");
  const other = application({ logger }).use(otherEvents);
  await own.start();
  await other.start(); // the most recently started bus in the process
  const until = async (what: string) => {
    for (let i = 0; i < 200 && !seen.includes(what); i++) {
      await new Promise((r) => setTimeout(r, 5));
    }
  };
  try {
    const res = await own.request(
      "/events/publish",
      post({ id: "two-apps-1", topic: "orders.created", payload: { n: 1 } }),
    );
    assert.equal(res.status, 200);
    await until("own:1");
    // The other app's broker delivers in order: had it received message 1, it would come first.
    await getPublisher(Orders, { bus: otherEvents.bus! })({ n: 2 });
    await until("other:2");
    assert.deepEqual(seen, ["own:1", "other:2"]);
  } finally {
    await other.stop();
    await own.stop();
  }
});

Deno.test("eventServer() publish: a failed realtime publish is ambiguous (500) and a retry publishes again", async () => {
  const realtime = memoryRealtime();
  let fail = true;
  const flaky = {
    name: "flaky",
    capabilities: realtime.capabilities,
    publish: (t: string, p: unknown) =>
      fail ? Promise.reject(new Error("store down")) : realtime.publish(t, p),
    subscribe: realtime.subscribe.bind(realtime),
    close: () => realtime.close(),
  };
  const sink = new MemorySink();
  const app = application({ logger: createLogger({ level: "error", sink }) })
    .use(eventServer({ topics: [Orders], realtime: flaky as typeof realtime }));
  const body = post({ id: "f-1", topic: "orders.created", payload: { n: 1 } });
  try {
    const first = await app.request("/events/publish", body);
    assert.equal(first.status, 500);
    assert.equal((await first.json()).outcome, "ambiguous");
    assert.deepEqual(sink.records.map((r) => r.message), ["eventServer(): publish failed"]);
    fail = false;
    const retry = await app.request(
      "/events/publish",
      post({ id: "f-1", topic: "orders.created", payload: { n: 1 } }),
    );
    assert.equal(retry.status, 200);
    assert.equal((await retry.json()).duplicate, false);
  } finally {
    await app.stop();
    await realtime.close();
  }
});

Deno.test("eventServer() publish: ids are forgotten after idempotencyWindowMs", async () => {
  const clock = new ManualClock(1_000_000);
  const app = makeApp({ clock, idempotencyWindowMs: 1000 });
  const body = { id: "w-1", topic: "orders.created", payload: { n: 1 } };
  try {
    assert.equal(
      (await (await app.request("/events/publish", post(body))).json()).duplicate,
      false,
    );
    assert.equal((await (await app.request("/events/publish", post(body))).json()).duplicate, true);
    await clock.advance(1001);
    assert.equal(
      (await (await app.request("/events/publish", post(body))).json()).duplicate,
      false,
    );
  } finally {
    await app.stop();
  }
});

Deno.test("eventServer() discovery document matches its schema and lists profiles, endpoints, limits and topics", async () => {
  const app = makeApp({ basePath: "/rt", maxSubscriptions: 7 });
  try {
    const res = await app.request("/.well-known/fw/events");
    assert.equal(res.status, 200);
    const doc = await res.json();
    assert.deepEqual(validateProtocolValue("discovery", doc), []);
    assert.deepEqual(doc.profiles, ["http", "websocket", "sse"]);
    assert.deepEqual(doc.endpoints, {
      publish: "/rt/publish",
      websocket: "/rt/ws",
      sse: "/rt/sse/{topic}",
    });
    assert.equal(doc.limits.maxSubscriptions, 7);
    assert.equal(doc.features.resume, true);
    assert.equal(doc.features.helloToken, false);
    assert.deepEqual(doc.topics.map((t: { name: string }) => t.name), [
      "orders.created",
      "admin.notice",
    ]);
    assert.equal(doc.topics[0].channel, "orders");
    assert.equal(doc.topics[0].schema.properties.n.type, "integer");
    const ws = await app.request("/rt/ws");
    assert.equal(ws.status, 400);
    assert.equal((await ws.json()).code, "invalid_request");
    const broken = await app.request("/rt/ws", { headers: { upgrade: "websocket" } });
    assert.equal(broken.status, 400);
    assert.match((await broken.json()).message, /^Invalid WebSocket upgrade: /);
  } finally {
    await app.stop();
  }
});

Deno.test("eventServer() refuses invalid options at once, naming them", () => {
  assert.throws(() => eventServer({ topics: [] }), /Invalid eventServer\(\) option "topics"/);
  assert.throws(
    () => eventServer({ topics: [Orders, Orders] }),
    /"topics\[1\]": topic "orders.created" is listed twice/,
  );
  assert.throws(() => eventServer({ topics: [Orders], basePath: "events" }), /"basePath"/);
  assert.throws(
    () => eventServer({ topics: [Orders], maxFrameBytes: 10 }),
    /"maxFrameBytes": expected an integer >= 256/,
  );
  assert.throws(
    () => eventServer({ topics: [Orders], access: "yes" as never }),
    /"access": expected a function/,
  );
});

Deno.test("eventServer() CORS: corsOrigins allows browser pages of those origins to publish; discovery is readable from anywhere", async () => {
  const app = makeApp({ corsOrigins: ["https://app.test"] });
  try {
    const pre = await app.request("/events/publish", {
      method: "OPTIONS",
      headers: {
        origin: "https://app.test",
        "access-control-request-method": "POST",
        "access-control-request-headers": "content-type, traceparent",
      },
    });
    assert.equal(pre.status, 204);
    assert.equal(pre.headers.get("access-control-allow-origin"), "https://app.test");
    assert.equal(pre.headers.get("access-control-allow-methods"), "POST");
    assert.match(pre.headers.get("access-control-allow-headers")!, /traceparent/);
    const body = { id: "c-1", topic: "orders.created", payload: { n: 1 } };
    const ok = await app.request("/events/publish", post(body, { origin: "https://app.test" }));
    assert.equal(ok.headers.get("access-control-allow-origin"), "https://app.test");
    const other = await app.request("/events/publish", post(body, { origin: "https://evil.test" }));
    assert.equal(other.headers.get("access-control-allow-origin"), null);
    const otherPre = await app.request("/events/publish", {
      method: "OPTIONS",
      headers: { origin: "https://evil.test", "access-control-request-method": "POST" },
    });
    assert.equal(otherPre.headers.get("access-control-allow-origin"), null);
    const discovery = await app.request("/.well-known/fw/events", {
      headers: { origin: "https://anywhere.test" },
    });
    assert.equal(discovery.headers.get("access-control-allow-origin"), "*");
    assert.throws(
      () => eventServer({ topics: [Orders], corsOrigins: ["app.test"] }),
      /"corsOrigins"/,
    );
  } finally {
    await app.stop();
  }
});
