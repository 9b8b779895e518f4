/**
 * Deploy readiness: each example is bundled with `deno bundle --platform=deno` (static analysis,
 * as a deploy build does) and the bundle runs with network and environment access and read access
 * to nothing but the bundle itself. Its routes answer, an event published by a route is handled,
 * and the pages it serves (the streams example's page, the example app's API docs with their
 * Swagger UI assets, the shop dashboard, the live example's page and its browser bundle of the event
 * client) come out of the bundle. Deno KV needs `--unstable-kv` here;
 * Deno Deploy has it built in.
 */

import assert from "node:assert/strict";
import { SseReader, WsClient } from "../application/testdata/stream_clients.ts";

const ROOT = new URL("../", import.meta.url).pathname;

/** Collects a child's output as it arrives. */
class Output {
  text = "";
  readonly done: Promise<void>;
  constructor(stream: ReadableStream<Uint8Array>) {
    this.done = (async () => {
      for await (const chunk of stream.pipeThrough(new TextDecoderStream())) this.text += chunk;
    })();
  }
}

/** A bundle running in its own process. */
interface Running {
  /** The URL the app printed at start-up. */
  url: string;
  /** Stops the process; returns what it wrote to stderr. */
  stop(): Promise<string>;
}

async function bundle(entry: string, dir: string): Promise<string> {
  const out = `${dir}/${entry.split("/").at(-3)}.js`;
  const { code, stderr } = await new Deno.Command(Deno.execPath(), {
    args: ["bundle", "--platform=deno", `${ROOT}${entry}`, "-o", out],
    cwd: ROOT,
    stdout: "null",
    stderr: "piped",
  }).output();
  assert.equal(code, 0, `deno bundle ${entry} failed:\n${new TextDecoder().decode(stderr)}`);
  return out;
}

/** Runs a bundle (outside the repository, with no config) until it prints its URL. */
async function run(
  file: string,
  env: Record<string, string>,
  flags: string[] = [],
): Promise<Running> {
  const child = new Deno.Command(Deno.execPath(), {
    args: [
      "run",
      "--no-config",
      ...flags,
      "--allow-net",
      "--allow-env",
      `--allow-read=${file}`,
      file,
    ],
    cwd: file.slice(0, file.lastIndexOf("/")),
    env: { PORT: "0", NO_COLOR: "1", ...env },
    stdin: "null",
    stdout: "piped",
    stderr: "piped",
  }).spawn();
  const stdout = new Output(child.stdout);
  const stderr = new Output(child.stderr);
  const stop = async () => {
    try {
      child.kill("SIGTERM");
    } catch {
      // already gone
    }
    await child.status;
    await Promise.all([stdout.done, stderr.done]);
    return stderr.text;
  };
  let exited = false;
  child.status.then(() => exited = true);
  for (let i = 0; i < 600; i++) {
    const url = /(http:\/\/[\d.]+:\d+)/.exec(stdout.text)?.[1];
    if (url !== undefined) return { url, stop };
    if (exited) break;
    await new Promise((r) => setTimeout(r, 50));
  }
  const err = await stop();
  throw new Error(`${file} did not start:\n${stdout.text}\n${err}`);
}

Deno.test("examples/app bundled: routes, an event and the docs page with no file-system access", async () => {
  const dir = await Deno.makeTempDir({ prefix: "fw-bundle-" });
  try {
    const file = await bundle("examples/app/src/main.ts", dir);
    const app = await run(file, { EVENTS_BROKER_PORT: "0", NODE_ENV: "production" });
    let stderr = "";
    try {
      const health = await fetch(`${app.url}/health`);
      assert.equal(health.status, 200);
      await health.body?.cancel();
      const users = await fetch(`${app.url}/users`);
      assert.equal(users.status, 200);
      assert.ok(Array.isArray(await users.json()));

      const id = crypto.randomUUID();
      const order = {
        id,
        customer: "Ada",
        items: [{ sku: "A-1", qty: 2 }],
        total: 42.5,
        currency: "EUR",
        placedAt: "2026-11-22T10:00:00Z",
      };
      const placed = await fetch(`${app.url}/orders`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify(order),
      });
      assert.equal(placed.status, 201);
      assert.equal((await placed.json()).status, "accepted");
      let handled: string[] = [];
      for (let i = 0; i < 200 && handled.length < 2; i++) {
        const audit = await (await fetch(`${app.url}/audit`)).json() as {
          event: string;
          orderId?: string;
        }[];
        handled = audit.filter((e) => e.orderId === id).map((e) => e.event).sort();
        if (handled.length < 2) await new Promise((r) => setTimeout(r, 25));
      }
      assert.deepEqual(handled, ["analytics.counted", "fulfilment.queued"]);

      const invalid = await fetch(`${app.url}/orders`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ ...order, total: -1 }),
      });
      assert.equal(invalid.status, 400);
      assert.equal((await invalid.json()).errors[0].field, "body.total");

      const spec = await fetch(`${app.url}/openapi.json`);
      assert.equal(spec.status, 200);
      assert.equal((await spec.json()).info.title, "fw example app");
      const page = await fetch(`${app.url}/docs`);
      assert.equal(page.status, 200);
      assert.match(await page.text(), /swagger-ui-bundle\.js/);
      for (
        const [asset, type] of [["swagger-ui-bundle.js", "javascript"], ["swagger-ui.css", "css"]]
      ) {
        const res = await fetch(`${app.url}/docs/${asset}`);
        assert.equal(res.status, 200, asset);
        assert.match(res.headers.get("content-type") ?? "", new RegExp(type));
        assert.ok((await res.text()).length > 10_000, `${asset} has its content`);
      }
      const icon = await fetch(`${app.url}/docs/favicon.svg`);
      assert.equal(icon.status, 200);
      assert.match(await icon.text(), /^<svg/);
    } finally {
      stderr = await app.stop();
    }
    assert.doesNotMatch(stderr, /NotCapable|PermissionDenied|Requires read access/);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("examples/streams bundled: page, stats, SSE feed and chat with no file-system access", async () => {
  const dir = await Deno.makeTempDir({ prefix: "fw-bundle-" });
  try {
    const file = await bundle("examples/streams/src/main.ts", dir);
    const app = await run(file, { FEED_INTERVAL_MS: "20" });
    let stderr = "";
    try {
      const page = await fetch(`${app.url}/`);
      assert.equal(page.status, 200);
      assert.match(await page.text(), /<html/i);

      const feed = new SseReader(
        await fetch(`${app.url}/feed`, { headers: { accept: "text/event-stream" } }),
      );
      const quote = await feed.nextEvent();
      assert.ok(quote?.id !== undefined && quote.data !== undefined, "a quote arrives");
      await feed.cancel();

      const ws = app.url.replace(/^http/, "ws");
      const ada = await WsClient.connect(`${ws}/chat/deploy?name=ada`);
      assert.equal(((await ada.json()) as { kind: string }).kind, "join");
      ada.send({ text: "hello from the bundle" });
      const heard = (await ada.json()) as { kind: string; text: string };
      assert.deepEqual([heard.kind, heard.text], ["message", "hello from the bundle"]);
      const stats = await (await fetch(`${app.url}/stats`)).json();
      assert.deepEqual(stats.rooms, [{ name: "deploy", members: 1 }]);
      await ada.close();
    } finally {
      stderr = await app.stop();
    }
    assert.doesNotMatch(stderr, /NotCapable|PermissionDenied|Requires read access/);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("examples/shop bundled: catalogue, an order paid by its event handler and the dashboard with no file-system access", async () => {
  const dir = await Deno.makeTempDir({ prefix: "fw-bundle-" });
  try {
    const file = await bundle("examples/shop/src/main.ts", dir);
    const app = await run(file, {
      SHOP_KV_PATH: ":memory:",
      SHOP_JWT_SECRET: "deploy-test-secret-of-at-least-32-characters",
    }, ["--unstable-kv"]); // Deno Deploy has KV built in
    let stderr = "";
    try {
      const page = await fetch(`${app.url}/`);
      assert.equal(page.status, 200);
      assert.match(await page.text(), /src="\/dashboard\.js"/);
      const script = await fetch(`${app.url}/dashboard.js`);
      assert.equal(script.status, 200);
      assert.match(await script.text(), /\/orders\/live/, "the dashboard's typed-client bundle");
      const products = await (await fetch(`${app.url}/products`)).json() as { sku: string }[];
      assert.ok(products.length > 0, "the catalogue is seeded");

      const placed = await fetch(`${app.url}/orders`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({
          customer: "ada@example.com",
          items: [{ sku: products[0].sku, qty: 1 }],
          paymentToken: "tok_visa",
        }),
      });
      if (placed.status !== 201) {
        // what the app answered and logged, so a failure on a loaded machine says why
        const body = await placed.text();
        throw new Error(
          `POST /orders answered ${placed.status} ${body}; the app's stderr:\n${await app.stop()}`,
        );
      }
      const { id } = await placed.json() as { id: string };
      let status = "";
      for (let i = 0; i < 400 && status !== "paid"; i++) {
        status = (await (await fetch(`${app.url}/orders/${id}`)).json() as { status: string })
          .status;
        if (status !== "paid") await new Promise((r) => setTimeout(r, 25));
      }
      assert.equal(status, "paid", "the payments handler ran in the bundle");

      const admin = await fetch(`${app.url}/admin/orders`);
      assert.equal(admin.status, 401);
      await admin.body?.cancel();
    } finally {
      stderr = await app.stop();
    }
    assert.doesNotMatch(stderr, /NotCapable|PermissionDenied|Requires read access/);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("examples/live bundled: page, client bundle, discovery and one event over the Event Server WebSocket with no file-system access", async () => {
  const dir = await Deno.makeTempDir({ prefix: "fw-bundle-" });
  try {
    const file = await bundle("examples/live/src/main.ts", dir);
    const app = await run(file, {});
    let stderr = "";
    try {
      const page = await fetch(`${app.url}/`);
      assert.equal(page.status, 200);
      assert.match(page.headers.get("content-type") ?? "", /text\/html/);
      assert.match(
        await page.text(),
        /import \{ eventClient, isCompatibleEventServer \} from "\/event_client\.js"/,
      );
      const client = await fetch(`${app.url}/event_client.js`);
      assert.equal(client.status, 200);
      assert.match(client.headers.get("content-type") ?? "", /^text\/javascript/);
      const js = await client.text();
      assert.match(js, /fw\.events\.v1/);
      assert.match(js, /export\s*\{[^}]*eventClient/, "the bundle exports eventClient");

      const discovery = await fetch(`${app.url}/.well-known/fw/events`);
      assert.equal(discovery.status, 200);
      const doc = await discovery.json() as {
        protocol: string;
        endpoints: { websocket: string; publish: string };
        topics: { name: string }[];
      };
      assert.equal(doc.protocol, "fw.events.v1");
      assert.deepEqual(doc.topics.map((t) => t.name).sort(), ["live.orders", "live.quotes"]);

      const ws = await WsClient.connect(
        `${app.url.replace(/^http/, "ws")}${doc.endpoints.websocket}`,
      );
      try {
        // Frames other than the ones awaited (pings) are skipped.
        const frame = async (type: string) => {
          for (;;) {
            const f = await ws.json() as { type: string } | undefined;
            assert.ok(f !== undefined, `the socket closed before a "${type}" frame`);
            if (f.type === type) return f as Record<string, unknown>;
            assert.notEqual(f.type, "error", JSON.stringify(f));
          }
        };
        ws.send({ type: "hello", protocol: "fw.events.v1" });
        assert.equal((await frame("welcome")).protocol, "fw.events.v1");
        ws.send({ type: "subscribe", sub: "o", topic: "live.orders" });
        assert.deepEqual(
          await frame("subscribed"),
          { type: "subscribed", sub: "o", topic: "live.orders", recovered: true },
        );
        const id = crypto.randomUUID();
        const published = await fetch(`${app.url}${doc.endpoints.publish}`, {
          method: "POST",
          headers: { "content-type": "application/json" },
          body: JSON.stringify({ id, topic: "live.orders", payload: { n: 1, item: "tea" } }),
        });
        assert.equal(published.status, 200, await published.text());
        const event = await frame("event");
        assert.deepEqual(
          [event.sub, event.topic, event.payload],
          ["o", "live.orders", { n: 1, item: "tea" }],
        );
      } finally {
        await ws.close();
      }
    } finally {
      stderr = await app.stop();
    }
    assert.doesNotMatch(stderr, /NotCapable|PermissionDenied|Requires read access/);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});
