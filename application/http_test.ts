import assert from "node:assert/strict";
import { endpoint } from "./endpoint.ts";
import { get, serve } from "./testdata/policy_app.ts";
import { makeApp } from "./testdata/policy_app.ts";

const echo = endpoint().body({ text: String }).handle(async (ctx) => ({
  got: (await ctx.body()).text,
}));
const lazy = endpoint().handle(async (ctx) => ({ got: await ctx.body() }));

const encoder = new TextEncoder();

/** Sends `head`, then `body` one byte every `gapMs`, and returns the status line received. */
async function slowClient(port: number, head: string, body: string, gapMs: number) {
  const conn = await Deno.connect({ hostname: "127.0.0.1", port });
  try {
    await conn.write(encoder.encode(head));
    let answered = false;
    const reading = (async () => {
      const buf = new Uint8Array(4096);
      let text = "";
      for (;;) {
        const n = await conn.read(buf).catch(() => null);
        if (n === null) break;
        text += new TextDecoder().decode(buf.subarray(0, n));
        if (text.includes("\r\n\r\n")) break;
      }
      answered = true;
      return text;
    })();
    let sent = 0;
    for (const byte of body) {
      if (answered) break;
      await new Promise((r) => setTimeout(r, gapMs));
      if (answered) break;
      try {
        await conn.write(encoder.encode(byte));
        sent++;
      } catch {
        break; // the server closed the connection after answering
      }
    }
    const text = await reading;
    return { status: text.split("\r\n")[0], sent };
  } finally {
    conn.close();
  }
}

Deno.test("http({ bodyTimeoutMs }) answers 408 to a body sent one byte at a time", async () => {
  const t = await serve({ "POST /echo": echo, "POST /lazy": lazy }, {
    http: { bodyTimeoutMs: 150 },
  });
  try {
    const port = t.app.address!.port;
    const body = JSON.stringify({ text: "x".repeat(200) });
    const head = (path: string) =>
      `POST ${path} HTTP/1.1\r\nhost: a\r\ncontent-type: application/json\r\ncontent-length: ${body.length}\r\n\r\n`;
    const validated = await slowClient(port, head("/echo"), body, 20);
    assert.equal(validated.status, "HTTP/1.1 408 Request Timeout");
    assert.ok(validated.sent < body.length);
    const read = await slowClient(port, head("/lazy"), body, 20);
    assert.equal(read.status, "HTTP/1.1 408 Request Timeout");
    // chunked, without a length: the same limit
    const chunked = await slowClient(
      port,
      "POST /echo HTTP/1.1\r\nhost: a\r\ncontent-type: application/json\r\ntransfer-encoding: chunked\r\n\r\n",
      "1\r\n{\r\n".repeat(100),
      20,
    );
    assert.equal(chunked.status, "HTTP/1.1 408 Request Timeout");
  } finally {
    await t.stop();
  }
});

Deno.test("http({ bodyTimeoutMs }) lets a slow body that arrives in time through", async () => {
  const t = await serve({ "POST /echo": echo }, { http: { bodyTimeoutMs: 5_000 } });
  try {
    const body = JSON.stringify({ text: "ok" });
    const res = await slowClient(
      t.app.address!.port,
      `POST /echo HTTP/1.1\r\nhost: a\r\ncontent-type: application/json\r\ncontent-length: ${body.length}\r\n\r\n`,
      body,
      5,
    );
    assert.equal(res.status, "HTTP/1.1 200 OK");
  } finally {
    await t.stop();
  }
});

async function rawStatus(port: number, request: string): Promise<string> {
  const conn = await Deno.connect({ hostname: "127.0.0.1", port });
  try {
    const writing = conn.write(encoder.encode(request)).catch(() => 0);
    const buf = new Uint8Array(1024);
    const n = await conn.read(buf).catch(() => null);
    await writing;
    return n === null ? "closed" : new TextDecoder().decode(buf.subarray(0, n)).split("\r\n")[0];
  } finally {
    conn.close();
  }
}

Deno.test("http() inherits Deno's caps on header count and size (400)", async () => {
  const t = await serve({ "GET /ok": endpoint().handle(() => "ok") });
  try {
    const port = t.app.address!.port;
    const many = Array.from({ length: 200 }, (_, i) => `x-h${i}: v\r\n`).join("");
    assert.equal(
      await rawStatus(port, `GET /ok HTTP/1.1\r\nhost: a\r\n${many}\r\n`),
      "HTTP/1.1 400 Bad Request",
    );
    const big = `x-big: ${"a".repeat(200_000)}\r\n`;
    assert.equal(
      await rawStatus(port, `GET /ok HTTP/1.1\r\nhost: a\r\n${big}\r\n`),
      "HTTP/1.1 400 Bad Request",
    );
    const fine = Array.from({ length: 50 }, (_, i) => `x-h${i}: v\r\n`).join("");
    assert.equal(
      await rawStatus(port, `GET /ok HTTP/1.1\r\nhost: a\r\nconnection: close\r\n${fine}\r\n`),
      "HTTP/1.1 200 OK",
    );
  } finally {
    await t.stop();
  }
});

Deno.test("http() rejects bad shutdownTimeoutMs and bodyTimeoutMs at start-up, naming them", async () => {
  for (const [option, value] of [["shutdownTimeoutMs", 0], ["bodyTimeoutMs", -5]] as const) {
    const t = makeApp({}, { http: { port: 0, [option]: value } });
    await assert.rejects(
      () => t.app.start(),
      new RegExp(`Invalid http\\(\\) option "${option}": expected a positive number`),
    );
    await t.stop();
  }
});

Deno.test("http({ shutdownTimeoutMs }) stops the application past the deadline, with a warning", async () => {
  let release!: () => void;
  const held = new Promise<void>((r) => release = r);
  let entered!: () => void;
  const inside = new Promise<void>((r) => entered = r);
  const t = await serve({
    "GET /hang": endpoint().handle(async () => {
      entered();
      await held;
      return "late";
    }),
  }, { http: { shutdownTimeoutMs: 50 } });
  const pending = fetch(`${t.url}/hang`).then((r) => r.text()).catch(() => "cut");
  try {
    await inside;
    await t.stop();
    assert.ok(
      t.sink.records.some((r) => r.level === "warn" && /shutdownTimeoutMs/.test(r.message)),
    );
    assert.equal(t.app.address, undefined);
  } finally {
    release();
    await pending;
  }
});

/** Sends a raw request (repeated header lines are kept) and returns the status line and body. */
async function rawRequest(port: number, head: string): Promise<{ status: string; body: string }> {
  const conn = await Deno.connect({ hostname: "127.0.0.1", port });
  try {
    await conn.write(encoder.encode(head));
    let text = "";
    const buf = new Uint8Array(4096);
    for (;;) {
      const n = await conn.read(buf).catch(() => null);
      if (n === null) break;
      text += new TextDecoder().decode(buf.subarray(0, n));
    }
    const [top, body = ""] = text.split("\r\n\r\n");
    return { status: top.split("\r\n")[0], body };
  } finally {
    conn.close();
  }
}

Deno.test("http() negotiates on Accept and checks Content-Type read from a served request; handlers still read req.headers", async () => {
  const item = endpoint().returns({ id: Number }).handle(() => ({ id: 1 }));
  const echo = endpoint().body({ text: String }).handle(async (ctx) => ({
    got: (await ctx.body()).text,
    agent: ctx.req.headers.get("user-agent"),
  }));
  const t = await serve({ "GET /item": item, "POST /echo": echo });
  try {
    const port = t.app.address!.port;
    const json = await get(`${t.url}/item`, { headers: { accept: "application/json" } });
    assert.equal(json.status, 200);
    assert.deepEqual(JSON.parse(json.body), { id: 1 });
    const xml = await get(`${t.url}/item`, { headers: { accept: "application/xml" } });
    assert.equal(xml.status, 200);
    assert.match(xml.headers.get("content-type")!, /^application\/xml/);
    const refused = await get(`${t.url}/item`, { headers: { accept: "image/png" } });
    assert.equal(refused.status, 406);
    assert.match(refused.body, /image\/png/);
    // Two Accept lines count as one list: the second makes JSON acceptable.
    const twoLines = await rawRequest(
      port,
      "GET /item HTTP/1.1\r\nhost: a\r\naccept: image/png\r\naccept: application/json\r\nconnection: close\r\n\r\n",
    );
    assert.equal(twoLines.status, "HTTP/1.1 200 OK");
    const posted = await get(`${t.url}/echo`, {
      method: "POST",
      headers: { "content-type": "application/json", "user-agent": "probe/1" },
      body: JSON.stringify({ text: "hi" }),
    });
    assert.equal(posted.status, 200);
    assert.deepEqual(JSON.parse(posted.body), { got: "hi", agent: "probe/1" });
    const wrongType = await get(`${t.url}/echo`, {
      method: "POST",
      headers: { "content-type": "text/plain" },
      body: "hi",
    });
    assert.equal(wrongType.status, 415);
  } finally {
    await t.stop();
  }
});
