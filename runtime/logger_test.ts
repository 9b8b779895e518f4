import assert from "node:assert/strict";
import { createLogger, formatLogLine, MemorySink } from "./logger.ts";

Deno.test("createLogger() filters by level", () => {
  const sink = new MemorySink();
  const log = createLogger({ level: "warn", sink, clock: () => 5 });
  log.debug("d");
  log.info("i");
  log.warn("w");
  log.error("e");
  assert.deepEqual(sink.records.map((r) => r.level), ["warn", "error"]);
  assert.equal(log.enabled("info"), false);
  assert.equal(log.enabled("error"), true);
  createLogger({ level: "silent", sink }).error("never");
  assert.equal(sink.records.length, 2);
});

Deno.test("Logger.child() merges fields and call fields win", () => {
  const sink = new MemorySink();
  const log = createLogger({ sink, fields: { app: "shop" }, clock: () => 0 }).child({
    mod: "orders",
  });
  log.info("created", { mod: "override", id: 1 });
  assert.deepEqual(sink.records[0].fields, { app: "shop", mod: "override", id: 1 });
});

Deno.test("formatLogLine() prints the trace id prefix and other fields as JSON", () => {
  const sink = new MemorySink();
  const log = createLogger({ sink, level: "debug" });
  log.info("message handled", {
    traceId: "4bf92f3577b34da6a3ce929d0e0e4736",
    event: { topic: "order.created", attempt: 1 },
  });
  log.warn("[response-validation] /users/1 — body.name must be a string");
  assert.deepEqual(sink.lines(), [
    'INFO [4bf92f3577b34da6a3ce929d0e0e4736] message handled {"event":{"topic":"order.created","attempt":1}}',
    "WARN [response-validation] /users/1 — body.name must be a string",
  ]);
});

Deno.test("formatLogLine() adds an error's stack and survives unserialisable fields", () => {
  const err = new Error("kaput");
  const line = formatLogLine({
    level: "error",
    message: "failed",
    fields: { error: err },
    time: 0,
  });
  assert.match(line, /^ERROR failed \{"error":\{"name":"Error","message":"kaput"\}\}\n/);
  assert.ok(line.includes("logger_test.ts"));
  const cyclic: Record<string, unknown> = {};
  cyclic.self = cyclic;
  assert.equal(
    formatLogLine({ level: "info", message: "x", fields: { cyclic }, time: 0 }),
    'INFO x "[unserialisable]"',
  );
});

Deno.test("createLogger() rejects an unknown level", () => {
  // @ts-expect-error: wrong level on purpose
  assert.throws(() => createLogger({ level: "loud" }), /Invalid log level "loud"/);
});
