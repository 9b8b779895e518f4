/**
 * End-to-end tests of the streaming example (examples/streams): Deno clients over real sockets,
 * and headless chromium receiving the SSE feed and chatting over a WebSocket.
 */

import assert from "node:assert/strict";
import { generate } from "@fw/application/cli";
import { streamsApp } from "../examples/streams/src/main.ts";
import { Feed, Ticker } from "../examples/streams/src/services.ts";
import { SseReader, WsClient } from "../application/testdata/stream_clients.ts";
import { Browser } from "./_cdp_browser.ts";

const EXAMPLE = new URL("../examples/streams/src/main.ts", import.meta.url);

/** The example on port 0 with a ticker driven by the test (`intervalMs` large: no timer ticks). */
async function startExample(intervalMs = 3_600_000) {
  const app = streamsApp({ port: 0, signals: false });
  const ticker = new Ticker(intervalMs);
  app.container.override(Feed, { value: ticker });
  await app.start();
  const url = app.address!.url;
  return {
    app,
    ticker,
    url,
    ws: url.replace(/^http/, "ws"),
    async stop() {
      await app.stop();
      ticker.stop();
    },
  };
}

Deno.test("streams example: the feed streams quotes and resumes after Last-Event-ID", async () => {
  const ex = await startExample();
  const res = await fetch(`${ex.url}/feed`, { headers: { accept: "text/event-stream" } });
  const reader = new SseReader(res);
  assert.deepEqual(await reader.next(), {}, "retry: 2000 comes first");
  const published = [ex.ticker.tick(), ex.ticker.tick(), ex.ticker.tick()];
  const events = [await reader.nextEvent(), await reader.nextEvent(), await reader.nextEvent()];
  assert.deepEqual(events.map((e) => e?.id), ["1", "2", "3"]);
  assert.deepEqual(events.map((e) => JSON.parse(e!.data!)), published);
  await reader.cancel();

  ex.ticker.tick(); // missed while disconnected
  const resumed = new SseReader(
    await fetch(`${ex.url}/feed`, {
      headers: { accept: "text/event-stream", "last-event-id": "2" },
    }),
  );
  assert.deepEqual([(await resumed.nextEvent())?.id, (await resumed.nextEvent())?.id], ["3", "4"]);
  await resumed.cancel();

  const bad = await fetch(`${ex.url}/feed?symbol=lower`, {
    headers: { accept: "text/event-stream" },
  });
  assert.equal(bad.status, 400);
  assert.equal((await bad.json()).errors[0].field, "query.symbol");
  await ex.stop();
});

Deno.test("streams example: chat rooms relay messages, joins and leaves over WebSockets", async () => {
  const ex = await startExample();
  const ada = await WsClient.connect(`${ex.ws}/chat/lab?name=ada`);
  assert.equal(((await ada.json()) as { kind: string }).kind, "join");
  const bob = await WsClient.connect(`${ex.ws}/chat/lab?name=bob`);
  assert.deepEqual(
    [(await bob.json()) as { from: string }, (await bob.json()) as { from: string }].map((m) =>
      m.from
    ),
    ["ada", "bob"],
    "history, then the own join",
  );
  assert.equal(((await ada.json()) as { from: string }).from, "bob");
  ada.send({ text: "hi bob" });
  const heard = (await bob.json()) as { kind: string; from: string; text: string };
  assert.deepEqual([heard.kind, heard.from, heard.text], ["message", "ada", "hi bob"]);
  const stats = await (await fetch(`${ex.url}/stats`)).json();
  assert.deepEqual(stats.rooms, [{ name: "lab", members: 2 }]);

  bob.send({ text: "" });
  const { code, messages } = await bob.rest();
  assert.equal(code, 1007);
  assert.equal(
    (messages.at(-1) as { error: { message: string } }).error.message,
    "message.text must be at least 1 characters",
  );
  await ada.json(); // ada's own message
  assert.equal(((await ada.json()) as { kind: string }).kind, "leave");
  await ada.close();
  await assert.rejects(WsClient.connect(`${ex.ws}/chat/lab`), /WebSocket failed/, "name required");
  await ex.stop();
});

Deno.test("streams example: the committed .gen/api.gen.ts lists the *.ws.ts route", async () => {
  const path = new URL("../examples/streams/src/.gen/api.gen.ts", import.meta.url);
  const before = await Deno.readTextFile(path);
  assert.match(before, /"chat\/\[room\]\.ws\.ts": \$0/);
  await generate(EXAMPLE.href);
  assert.equal(await Deno.readTextFile(path), before, "run `deno task generate` and commit .gen/");
});

Deno.test({
  name: "streams example in headless chromium: SSE quotes arrive and chat works both ways",
  async fn() {
    const ex = await startExample(50);
    const browser = await Browser.launch();
    let deno: WsClient | undefined;
    try {
      const page = await browser.open(`${ex.url}/?room=e2e&name=chromium`);
      await page.waitFor("globalThis.fwDemo?.quotes >= 4", "four quotes over SSE");
      assert.equal(
        await page.evaluate("document.getElementById('feed-status').textContent"),
        "live",
      );
      assert.equal(await page.evaluate("document.querySelectorAll('#quotes tr').length"), 4);
      assert.ok(Number(await page.evaluate("globalThis.fwDemo.lastEventId")) >= 4);
      await page.waitFor(
        "document.getElementById('chat-status').textContent === 'live'",
        "the chat WebSocket",
      );

      deno = await WsClient.connect(`${ex.ws}/chat/e2e?name=deno`);
      await page.evaluate(`(() => {
        document.getElementById("chat-text").value = "hello from chromium";
        document.getElementById("chat-form").requestSubmit();
      })()`);
      let heard: { kind?: string; from?: string; text?: string } | undefined;
      while (heard?.text !== "hello from chromium") heard = (await deno.json()) as typeof heard;
      assert.equal(heard?.from, "chromium");

      deno.send({ text: "hello from deno" });
      await page.waitFor(
        "[...document.querySelectorAll('#log li')].some((li) => li.textContent === 'deno: hello from deno')",
        "the Deno message in the page",
      );
      const png = await page.screenshot();
      assert.deepEqual([...png.slice(1, 4)], [0x50, 0x4e, 0x47], "a PNG screenshot");
      await Deno.writeFile(`${await Deno.makeTempDir()}/streams_example.png`, png);
      assert.deepEqual(await page.evaluate("globalThis.fwDemo.errors"), []);
    } finally {
      await deno?.close();
      await browser.close();
      await ex.stop();
    }
  },
});
