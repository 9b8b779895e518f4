/**
 * Distributed tracing across the managed `eventserver` transport: an application publishes from
 * a request through `POST /events/publish` of an Event Server application, whose handler fails
 * once and then acknowledges. Both applications trace into one in-memory exporter, and the
 * whole path is one trace: the client's request and publish, the server's request, its publish
 * and the two delivery attempts.
 */

import assert from "node:assert/strict";
import { api, application, endpoint, http } from "@fw/application";
import { telemetry } from "@fw/application/telemetry";
import { events, getPublisher, handler, Int, memoryRealtime, topic } from "@fw/events";
import { eventServer } from "@fw/events/server";
import { createLogger } from "@fw/runtime";
import { memoryTracing, parentOf } from "./_tracing.ts";

const Orders = topic("shop.orders", { n: Int }, { version: "1" });
const logger = createLogger({ level: "silent" });

Deno.test("tracing: request -> eventserver transport -> POST /events/publish -> two attempts is one trace", async () => {
  const { provider, exporter } = memoryTracing();
  let calls = 0;
  let finished!: () => void;
  const done = new Promise<void>((resolve) => finished = resolve);
  const realtime = memoryRealtime({ logger });
  const server = application({ logger })
    .use(http({ port: 0, hostname: "127.0.0.1", signals: false }))
    .use(telemetry({ tracerProvider: provider, http: false }))
    .use(events({
      autoScan: false,
      brokerPort: false,
      handlers: [
        handler(Orders).options({ group: "billing", maxBackoff: 10, jitter: 0 }).handle(() => {
          if (++calls === 1) throw new Error("ledger locked");
          finished();
        }),
      ],
    }))
    .use(eventServer({ topics: [Orders], realtime, access: () => true }));
  await server.start();
  const plugin = events({
    autoScan: false,
    brokerPort: false,
    transport: "eventserver",
    eventServer: {
      origin: `http://127.0.0.1:${server.address!.port}`,
      audience: "events",
      contractVersion: "1",
    },
  });
  const client = application({ logger })
    .use(telemetry({ tracerProvider: provider, http: false }))
    .use(plugin)
    .use(
      api({ autoScan: false }).route(
        "POST",
        "/checkout",
        endpoint().handle(async () => {
          // Both applications share this process: publish on the client's bus explicitly.
          await getPublisher(Orders, { bus: plugin.bus! })({ n: 1 });
          return { ok: true };
        }),
      ),
    );
  await client.start();
  try {
    const res = await client.request("/checkout", { method: "POST" });
    assert.equal(res.status, 200);
    await res.body?.cancel();
    await done;
    for (let i = 0; i < 200 && exporter.getFinishedSpans().length < 6; i++) {
      await new Promise((r) => setTimeout(r, 10));
    }
    const spans = exporter.getFinishedSpans();
    const named = (name: string) => spans.filter((s) => s.name === name);
    const [checkout] = named("POST /checkout");
    const publishes = named("shop.orders publish");
    const [incoming] = spans.filter((s) =>
      s.kind === 1 && s.attributes["url.path"] === "/events/publish"
    );
    const attempts = named("shop.orders process");
    assert.ok(checkout && incoming, spans.map((s) => s.name).join(", "));
    const clientPublish = publishes.find((s) => s.attributes["messaging.system"] === "eventserver");
    const serverPublish = publishes.find((s) => s.attributes["messaging.system"] === "memory");
    assert.ok(clientPublish && serverPublish);
    const trace = checkout.spanContext().traceId;
    for (const s of [clientPublish, incoming, serverPublish, ...attempts]) {
      assert.equal(s.spanContext().traceId, trace, `${s.name} is in the trace`);
    }
    assert.equal(parentOf(clientPublish), checkout.spanContext().spanId);
    assert.equal(parentOf(incoming), clientPublish.spanContext().spanId, "traceparent continued");
    assert.equal(parentOf(serverPublish), incoming.spanContext().spanId);
    assert.deepEqual(
      attempts.map((s) => [parentOf(s), s.attributes["fw.events.outcome"]]).sort(),
      [[serverPublish.spanContext().spanId, "acked"], [
        serverPublish.spanContext().spanId,
        "retry",
      ]],
    );
  } finally {
    await client.stop();
    await server.stop();
    await realtime.close();
    await provider.shutdown();
  }
});
