/**
 * Distributed tracing end to end with Deno's built-in OpenTelemetry exporter: the fixture app
 * runs in a subprocess with `OTEL_DENO=true`, exporting OTLP/HTTP JSON to a receiver this test
 * serves on a free port. The receiver decodes what arrives and must find the request, the publish
 * and both delivery attempts in one trace, with their parentage and attribute names.
 */

import assert from "node:assert/strict";

interface OtlpValue {
  stringValue?: string;
  intValue?: string | number;
  doubleValue?: number;
  boolValue?: boolean;
}
interface OtlpSpan {
  traceId: string;
  spanId: string;
  parentSpanId: string;
  name: string;
  kind: number;
  attributes: { key: string; value: OtlpValue }[];
  events: { name: string }[];
  status: { code: number };
}
interface OtlpTraces {
  resourceSpans: { scopeSpans: { scope: { name: string }; spans: OtlpSpan[] }[] }[];
}

function attr(span: OtlpSpan, key: string): unknown {
  const v = span.attributes.find((a) => a.key === key)?.value;
  if (v === undefined) return undefined;
  return v.stringValue ?? (v.intValue !== undefined ? Number(v.intValue) : undefined) ??
    v.doubleValue ?? v.boolValue;
}

Deno.test("tracing: Deno's built-in OTLP exporter ships the request, the publish and both attempts as one trace", async () => {
  const spans: OtlpSpan[] = [];
  const receiver = Deno.serve({ port: 0, hostname: "127.0.0.1", onListen() {} }, async (req) => {
    const body = await req.text();
    if (new URL(req.url).pathname === "/v1/traces") {
      assert.equal(req.headers.get("content-type"), "application/json");
      const decoded = JSON.parse(body) as OtlpTraces;
      for (const r of decoded.resourceSpans) {
        for (const s of r.scopeSpans) if (s.scope.name === "fw") spans.push(...s.spans);
      }
    }
    return Response.json({});
  });
  try {
    const out = await new Deno.Command(Deno.execPath(), {
      args: ["run", "-A", new URL("./fixtures/traced_app/main.ts", import.meta.url).pathname],
      env: {
        OTEL_DENO: "true",
        OTEL_EXPORTER_OTLP_PROTOCOL: "http/json",
        OTEL_EXPORTER_OTLP_ENDPOINT: `http://127.0.0.1:${receiver.addr.port}`,
        OTEL_SERVICE_NAME: "fw-trace-test",
      },
      stdout: "piped",
      stderr: "piped",
    }).output();
    const stdout = new TextDecoder().decode(out.stdout);
    assert.ok(out.success, new TextDecoder().decode(out.stderr));
    const { traceId, status } = JSON.parse(stdout.trim().split("\n").at(-1)!);
    assert.equal(status, 200);
    const trace = spans.filter((s) => s.traceId === traceId);
    const byName = (name: string) => trace.filter((s) => s.name === name);
    const [server] = byName("POST /orders/:id");
    const [publish] = byName("orders.placed publish");
    const attempts = byName("orders.placed process");
    assert.ok(server && publish, `got ${spans.map((s) => s.name).join(", ")}`);
    assert.equal(server.kind, 2 /* OTLP SERVER */);
    assert.equal(attr(server, "http.route"), "/orders/:id");
    assert.equal(attr(server, "http.response.status_code"), 200);
    assert.equal(publish.kind, 4 /* OTLP PRODUCER */);
    assert.equal(publish.parentSpanId, server.spanId);
    assert.equal(attr(publish, "messaging.system"), "memory");
    assert.deepEqual(
      attempts.map((
        s,
      ) => [s.kind, s.parentSpanId, attr(s, "fw.events.attempt"), attr(s, "fw.events.outcome")])
        .sort((a, b) => Number(a[2]) - Number(b[2])),
      [[5, publish.spanId, 1, "retry"], [5, publish.spanId, 2, "acked"]],
    );
  } finally {
    await receiver.shutdown();
  }
});
