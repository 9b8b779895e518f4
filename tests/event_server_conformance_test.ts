/**
 * The conformance runner (events/protocol/conformance.ts) against fw's own Event Server, and
 * against the same server behind a proxy that breaks one frame: the runner must fail there,
 * naming the frame (issue 14: "a test proves the runner can fail").
 */
import assert from "node:assert/strict";
import { runEventServerConformance } from "@fw/events/testing";
import { startConformanceApp } from "../scripts/_conformance_app.ts";

Deno.test("runEventServerConformance() passes every step against fw's own server", async () => {
  const { app, url } = await startConformanceApp();
  try {
    const report = await runEventServerConformance(url);
    const failed = report.steps.filter((s) => s.status !== "pass");
    assert.deepEqual(failed, []);
    assert.equal(report.passed, report.steps.length);
    assert.ok(report.passed >= 29);
  } finally {
    await app.stop();
  }
});

/** A proxy to `target` that drops `recovered` from every `subscribed` frame. */
function brokenProxy(target: string): Deno.HttpServer<Deno.NetAddr> {
  return Deno.serve({ port: 0, hostname: "127.0.0.1", onListen() {} }, async (req) => {
    const url = new URL(req.url);
    const upstreamUrl = `${target}${url.pathname}${url.search}`;
    if (req.headers.get("upgrade") !== "websocket") {
      const res = await fetch(upstreamUrl, {
        method: req.method,
        headers: req.headers,
        body: req.body,
      });
      return new Response(res.body, { status: res.status, headers: res.headers });
    }
    const { socket, response } = Deno.upgradeWebSocket(req);
    const upstream = new WebSocket(upstreamUrl.replace(/^http/, "ws"));
    const early: string[] = [];
    upstream.onopen = () => early.splice(0).forEach((m) => upstream.send(m));
    socket.onmessage = (e) => {
      if (upstream.readyState === WebSocket.OPEN) upstream.send(e.data);
      else early.push(e.data);
    };
    upstream.onmessage = (e) => {
      const frame = JSON.parse(e.data);
      if (frame.type === "subscribed") delete frame.recovered;
      if (socket.readyState === WebSocket.OPEN) socket.send(JSON.stringify(frame));
    };
    upstream.onclose = (e) => {
      if (socket.readyState === WebSocket.OPEN) socket.close(e.code, e.reason);
    };
    socket.onclose = () => {
      if (upstream.readyState <= WebSocket.OPEN) upstream.close();
    };
    return response;
  });
}

Deno.test("runEventServerConformance() fails, naming the frame, against a server with a broken subscribed frame", async () => {
  const { app, url } = await startConformanceApp();
  const proxy = brokenProxy(url);
  try {
    const report = await runEventServerConformance(`http://127.0.0.1:${proxy.addr.port}`, {
      timeoutMs: 2000,
    });
    const failed = report.steps.filter((s) => s.status === "fail");
    assert.ok(failed.length > 0);
    assert.ok(failed.some((s) => s.id === "ws.multiplex"));
    for (const s of failed) {
      assert.ok(s.id.startsWith("ws."), s.id);
      assert.match(s.message!, /frame "subscribed": recovered is required/);
    }
    // HTTP publish, discovery and SSE are not broken, so they still pass.
    assert.equal(report.steps.find((s) => s.id === "publish.retry")?.status, "pass");
    assert.equal(report.steps.find((s) => s.id === "sse.resume")?.status, "pass");
  } finally {
    await proxy.shutdown();
    await app.stop();
  }
});
