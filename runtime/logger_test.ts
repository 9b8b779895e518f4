import assert from "node:assert/strict";
import {
  consoleSink,
  createLogger,
  formatLogJson,
  formatLogLine,
  type LogRecord,
  MemorySink,
} from "./logger.ts";

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

function captureConsole(fn: () => void): { out: string[]; err: string[] } {
  const out: string[] = [];
  const err: string[] = [];
  const { log, error } = console;
  console.log = (line: string) => void out.push(line);
  console.error = (line: string) => void err.push(line);
  try {
    fn();
  } finally {
    console.log = log;
    console.error = error;
  }
  return { out, err };
}

Deno.test("consoleSink() writes text lines, debug/info to stdout and warn/error to stderr", () => {
  const { out, err } = captureConsole(() => {
    const log = createLogger({ level: "debug", sink: consoleSink(), clock: () => 0 });
    log.debug("starting", { port: 8000 });
    log.info("message handled", { traceId: "t-1" });
    log.warn("[response-validation] /users/1 — body.name must be a string");
    log.error("failed", { traceId: "t-2", status: 500 });
  });
  assert.deepEqual(out, ['DEBUG starting {"port":8000}', "INFO [t-1] message handled"]);
  assert.deepEqual(err, [
    "WARN [response-validation] /users/1 — body.name must be a string",
    'ERROR [t-2] failed {"status":500}',
  ]);
});

Deno.test("consoleSink({ format: 'json' }) writes one JSON object per record", () => {
  const { out, err } = captureConsole(() => {
    const log = createLogger({
      level: "info",
      sink: consoleSink({ format: "json" }),
      clock: () => Date.UTC(2026, 0, 2, 3, 4, 5),
      fields: { service: "orders" },
    });
    log.debug("hidden");
    log.info("order created", { traceId: "abc", id: 7 });
    log.error("payment failed", { error: new Error("card declined") });
  });
  assert.deepEqual(out.map((l) => JSON.parse(l)), [
    {
      level: "info",
      time: "2026-01-02T03:04:05.000Z",
      message: "order created",
      service: "orders",
      traceId: "abc",
      id: 7,
    },
  ]);
  const [line] = err.map((l) => JSON.parse(l));
  assert.equal(line.level, "error");
  assert.equal(line.message, "payment failed");
  assert.deepEqual([line.error.name, line.error.message], ["Error", "card declined"]);
  assert.match(line.error.stack, /card declined\n\s+at /);
  // @ts-expect-error: wrong format on purpose
  assert.throws(() => consoleSink({ format: "xml" }), /Invalid log format "xml"/);
});

Deno.test("formatLogJson() keeps level, time and message when fields use those names", () => {
  const record: LogRecord = {
    level: "warn",
    message: "real message",
    fields: { message: "field message", level: 3, time: "later", ok: true },
    time: 0,
  };
  assert.deepEqual(JSON.parse(formatLogJson(record)), {
    level: "warn",
    time: "1970-01-01T00:00:00.000Z",
    message: "real message",
    "field.message": "field message",
    "field.level": 3,
    "field.time": "later",
    ok: true,
  });
});

Deno.test("formatLogLine() omits an empty trace id and serialises bigint fields", () => {
  assert.equal(
    formatLogLine({ level: "info", message: "m", fields: { traceId: "", n: 10n }, time: 0 }),
    'INFO m {"n":"10"}',
  );
});

Deno.test("Logger.child() keeps the level, sink and clock of its parent", () => {
  const sink = new MemorySink();
  let now = 100;
  const parent = createLogger({ level: "warn", sink, clock: () => now });
  const child = parent.child({ a: 1 }).child({ b: 2 });
  assert.equal(child.level, "warn");
  child.info("dropped");
  now = 200;
  child.warn("kept");
  parent.warn("parent", { c: 3 });
  assert.deepEqual(sink.records, [
    { level: "warn", message: "kept", fields: { a: 1, b: 2 }, time: 200 },
    { level: "warn", message: "parent", fields: { c: 3 }, time: 200 },
  ]);
});

async function levelFromEnv(value: string): Promise<{ code: number; text: string }> {
  const { code, stdout, stderr } = await new Deno.Command(Deno.execPath(), {
    args: [
      "eval",
      `import { createLogger } from "${new URL("./logger.ts", import.meta.url).href}";` +
      "try { console.log(createLogger().level); } catch (e) { console.log(e.message); }",
    ],
    env: { LOG_LEVEL: value, NO_COLOR: "1" },
    stdout: "piped",
    stderr: "piped",
  }).output();
  const decode = (b: Uint8Array) => new TextDecoder().decode(b).trim();
  return { code, text: decode(stdout) || decode(stderr) };
}

Deno.test("createLogger() takes its default level from LOG_LEVEL and rejects a bad one", async () => {
  assert.deepEqual(await levelFromEnv("DEBUG"), { code: 0, text: "debug" });
  assert.deepEqual(await levelFromEnv(""), { code: 0, text: "info" });
  assert.deepEqual(await levelFromEnv("loud"), {
    code: 0,
    text: 'Invalid LOG_LEVEL environment variable "loud": use debug, info, warn, error or silent',
  });
});
