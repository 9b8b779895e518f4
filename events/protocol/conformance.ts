/**
 * The `fw.events.v1` conformance runner: executes the steps of `manifest.json` against a running
 * Event Server and reports pass or fail per step, naming the frame or field that was wrong. A
 * server under test declares the two topics the manifest names (`conformance.echo`, open to
 * everyone; `conformance.private`, closed to anonymous clients).
 *
 * @module
 */

import manifestJson from "./manifest.json" with { type: "json" };
import {
  mismatch,
  pick,
  SseReader,
  StepFailure,
  substitute,
  WsSession,
} from "./_conformance_io.ts";
import { type ProtocolSchemaName, validateProtocolValue } from "./schemas.ts";

/** The result of one step. */
export interface ConformanceStepResult {
  /** Step id from the manifest, for example `ws.resume`. */
  readonly id: string;
  /** What the step checks. */
  readonly title: string;
  /** `pass`, `fail`, or `skip` (the server lacks a feature the step requires). */
  readonly status: "pass" | "fail" | "skip";
  /** Why it failed or was skipped. */
  readonly message?: string;
  /** Duration in ms. */
  readonly ms: number;
}

/** The result of a run. */
export interface ConformanceReport {
  /** The server's base URL. */
  readonly url: string;
  /** Every step in manifest order. */
  readonly steps: readonly ConformanceStepResult[];
  /** Steps passed. */
  readonly passed: number;
  /** Steps failed. */
  readonly failed: number;
  /** Steps skipped. */
  readonly skipped: number;
}

/** Options of {@linkcode runEventServerConformance}. */
export interface ConformanceOptions {
  /** How long to wait for each expected answer (default: the manifest's, 5000 ms). */
  readonly timeoutMs?: number;
  /** Called after each step (to print progress). */
  readonly onStep?: (result: ConformanceStepResult) => void;
}

// deno-lint-ignore no-explicit-any
type Json = any;

const manifest: Json = manifestJson;

const fixtureCache = new Map<string, Json>();

async function fixture(path: string): Promise<Json> {
  let f = fixtureCache.get(path);
  if (f === undefined) {
    const res = await fetch(new URL(`./fixtures/${path}`, import.meta.url));
    if (!res.ok) throw new StepFailure(`cannot read fixture "${path}"`);
    fixtureCache.set(path, f = await res.json());
  }
  return f;
}

function checkBody(schema: ProtocolSchemaName, body: unknown, what: string): void {
  const issues = validateProtocolValue(schema, body);
  if (issues.length > 0) {
    throw new StepFailure(
      `${what} does not match schema "${schema}": ${
        issues.map((i) => `${i.field} ${i.message}`).join("; ")
      }`,
    );
  }
}

function check(expected: Json, actual: unknown, what: string): void {
  if (expected === undefined) return;
  const m = mismatch(expected, actual);
  if (m) throw new StepFailure(`${what}: ${m}`);
}

class Run {
  readonly vars: Record<string, unknown>;
  discovery: Json = undefined;

  constructor(readonly base: URL, readonly timeoutMs: number) {
    const trace = [...crypto.getRandomValues(new Uint8Array(16))]
      .map((b) => b.toString(16).padStart(2, "0")).join("");
    this.vars = {
      run: `conf-${Date.now().toString(36)}-${trace.slice(0, 6)}`,
      trace,
      // A due time no step outlives: a delayed message must not show up during the run.
      later: Date.now() + 10 * 60_000,
    };
  }

  endpoint(name: "publish" | "websocket" | "sse"): string {
    const fallback = {
      publish: "/events/publish",
      websocket: "/events/ws",
      sse: "/events/sse/{topic}",
    };
    return this.discovery?.endpoints?.[name] ?? fallback[name];
  }

  url(path: string, ws = false): string {
    const u = new URL(path, this.base);
    if (ws) u.protocol = u.protocol === "https:" ? "wss:" : "ws:";
    return u.href;
  }

  async publish(body: Json): Promise<void> {
    const res = await fetch(this.url(this.endpoint("publish")), {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify(body),
    });
    const text = await res.text();
    if (res.status !== 200) throw new StepFailure(`publish answered ${res.status}: ${text}`);
  }

  async http(step: Json): Promise<void> {
    const h = substitute(step.http, this.vars) as Json;
    const path = h.endpoint ? this.endpoint(h.endpoint) : h.path;
    let body: string | undefined;
    if (h.rawBody !== undefined) body = h.rawBody;
    else if (h.fixture !== undefined) body = JSON.stringify((await fixture(h.fixture)).frame);
    else if (h.body !== undefined) body = JSON.stringify(h.body);
    const res = await fetch(this.url(path), { method: h.method, headers: h.headers ?? {}, body });
    await this.response(step, res);
  }

  async response(step: Json, res: Response): Promise<Json> {
    const expect = substitute(step.expect, this.vars) as Json;
    const text = await res.text();
    if (res.status !== expect.status) {
      throw new StepFailure(
        `status ${res.status}, expected ${expect.status}: ${text.slice(0, 200)}`,
      );
    }
    let json: Json;
    try {
      json = JSON.parse(text);
    } catch {
      throw new StepFailure(`body is not JSON: ${text.slice(0, 120)}`);
    }
    if (expect.schema) checkBody(expect.schema, json, `body (${res.status})`);
    check(expect.match, json, "body");
    for (const [name, path] of Object.entries(step.capture ?? {})) {
      this.vars[name] = pick(json, path as string);
    }
    if (step.id === "discovery") this.discovery = json;
    return json;
  }

  async expectFrame(ws: WsSession, expect: Json): Promise<Record<string, unknown>> {
    const item = await ws.next(this.timeoutMs, `"${expect.frame}" frame`);
    if ("close" in item) {
      throw new StepFailure(
        `connection closed (${item.close.code}) while waiting for "${expect.frame}"`,
      );
    }
    const f = item.frame;
    if (f.type !== expect.frame) {
      throw new StepFailure(
        `received frame "${f.type}" (${
          JSON.stringify(f).slice(0, 160)
        }), expected "${expect.frame}"`,
      );
    }
    check(expect.match, f, `frame "${f.type}"`);
    for (const [name, path] of Object.entries(expect.capture ?? {})) {
      this.vars[name] = pick(f, path as string);
    }
    return f;
  }

  async ws(step: Json): Promise<void> {
    const ws = await WsSession.open(this.url(this.endpoint("websocket"), true), this.timeoutMs);
    let health = 0;
    try {
      for (const raw of step.ws as Json[]) {
        const op = substitute(raw, this.vars) as Json;
        if (op.send) ws.send(JSON.stringify(op.send));
        else if (op.sendBinary) ws.send(new Uint8Array([1, 2, 3]));
        else if (op.sendOversized) {
          const size = (this.discovery?.limits?.maxFrameBytes ?? 65536) + 1;
          const head = '{"type":"ping","id":"big","pad":"';
          ws.send(head + "x".repeat(size - head.length - 2) + '"}');
        } else if (op.publish) await this.publish(op.publish);
        else if (op.expect) await this.expectFrame(ws, op.expect);
        else if (op.expectAll) {
          const want = [...op.expectAll] as Json[];
          while (want.length > 0) {
            const item = await ws.next(
              this.timeoutMs,
              `${want.map((w) => `"${w.frame}"`).join(", ")} frames`,
            );
            if ("close" in item) throw new StepFailure(`connection closed (${item.close.code})`);
            const i = want.findIndex((w) =>
              w.frame === item.frame.type && !mismatch(w.match, item.frame)
            );
            if (i < 0) {
              throw new StepFailure(
                `unexpected frame "${item.frame.type}": ${
                  JSON.stringify(item.frame).slice(0, 160)
                }`,
              );
            }
            want.splice(i, 1);
          }
        } else if (op.expectClose) {
          const item = await ws.next(this.timeoutMs, `close ${op.expectClose}`);
          if (!("close" in item)) {
            throw new StepFailure(
              `received frame "${item.frame.type}", expected close ${op.expectClose}`,
            );
          }
          if (item.close.code !== op.expectClose) {
            throw new StepFailure(`closed with ${item.close.code}, expected ${op.expectClose}`);
          }
        } else if (op.fixture) {
          const f = await fixture(op.fixture);
          ws.send(f.text ?? JSON.stringify(f.frame));
          const sub =
            typeof f.frame?.sub === "string" && /^[A-Za-z0-9._:-]{1,64}$/.test(f.frame.sub)
              ? { sub: f.frame.sub }
              : {};
          try {
            await this.expectFrame(ws, { frame: "error", match: { code: f.error, ...sub } });
            const id = `h${++health}`;
            ws.send(JSON.stringify({ type: "ping", id }));
            await this.expectFrame(ws, { frame: "pong", match: { id } });
          } catch (e) {
            throw new StepFailure(`fixture ${op.fixture}: ${(e as Error).message}`);
          }
        } else throw new StepFailure(`unknown manifest operation ${JSON.stringify(op)}`);
      }
    } finally {
      await ws.close();
    }
  }

  async sse(step: Json): Promise<void> {
    const s = substitute(step.sse, this.vars) as Json;
    const path = this.endpoint("sse").replace("{topic}", encodeURIComponent(s.topic));
    const abort = new AbortController();
    const timer = setTimeout(() => abort.abort(), this.timeoutMs);
    try {
      const res = await fetch(this.url(path), {
        headers: { accept: "text/event-stream", ...s.headers },
        signal: abort.signal,
      });
      const expect = substitute(step.expect, this.vars) as Json;
      if (!expect.events) return void await this.response(step, res);
      if (res.status !== expect.status || !res.body) {
        throw new StepFailure(
          `status ${res.status}, expected ${expect.status}: ${(await res.text()).slice(0, 200)}`,
        );
      }
      if (!/^text\/event-stream/.test(res.headers.get("content-type") ?? "")) {
        throw new StepFailure(
          `content-type "${res.headers.get("content-type")}", expected text/event-stream`,
        );
      }
      const reader = new SseReader(res.body);
      try {
        for (const want of expect.events as Json[]) {
          const got = await reader.next();
          if (!got) throw new StepFailure(`stream ended before event "${want.event}"`);
          if (got.event !== want.event) {
            throw new StepFailure(
              `received event "${got.event}" (${got.data.slice(0, 120)}), expected "${want.event}"`,
            );
          }
          if (want.id !== undefined && got.id !== want.id) {
            throw new StepFailure(
              `event "${got.event}" has id ${JSON.stringify(got.id)}, expected ${
                JSON.stringify(want.id)
              }`,
            );
          }
          let data: Json;
          try {
            data = JSON.parse(got.data);
          } catch {
            throw new StepFailure(
              `event "${got.event}" data is not JSON: ${got.data.slice(0, 80)}`,
            );
          }
          if (want.schema) checkBody(want.schema, data, `event "${got.event}" data`);
          check(want.match, data, `event "${got.event}" data`);
          if (got.event === "subscribed" && step.publish) {
            await this.publish(substitute(step.publish, this.vars));
          }
        }
      } finally {
        await reader.cancel();
      }
    } catch (e) {
      if (abort.signal.aborted) {
        throw new StepFailure(`no complete answer within ${this.timeoutMs} ms`);
      }
      throw e;
    } finally {
      clearTimeout(timer);
    }
  }
}

/**
 * Runs the conformance manifest against a server.
 *
 * @param url The server's base URL (its origin; the discovery document is at
 *   `/.well-known/fw/events`).
 * @param options Time-out and a progress callback.
 * @returns The report: pass, fail or skip per step.
 *
 * @example
 * ```ts ignore
 * import { runEventServerConformance } from "@fw/events/testing";
 * const report = await runEventServerConformance("http://127.0.0.1:8000");
 * console.log(`${report.passed} passed, ${report.failed} failed`);
 * ```
 */
export async function runEventServerConformance(
  url: string | URL,
  options: ConformanceOptions = {},
): Promise<ConformanceReport> {
  const base = new URL(String(url));
  const run = new Run(base, options.timeoutMs ?? manifest.timeoutMs ?? 5000);
  const steps: ConformanceStepResult[] = [];
  for (const step of manifest.steps as Json[]) {
    const started = performance.now();
    let result: ConformanceStepResult;
    const lacks = (step.requires === "resume" && run.discovery?.features?.resume === false)
      ? "the server does not resume"
      : (step.requires === "delayedPublish" && run.discovery?.features?.delayedPublish !== true)
      ? "the server does not delay publishes"
      : undefined;
    if (lacks !== undefined) {
      result = { id: step.id, title: step.title, status: "skip", message: lacks, ms: 0 };
    } else {
      try {
        if (step.http) await run.http(step);
        else if (step.ws) await run.ws(step);
        else if (step.sse) await run.sse(step);
        result = {
          id: step.id,
          title: step.title,
          status: "pass",
          ms: Math.round(performance.now() - started),
        };
      } catch (e) {
        const message = e instanceof StepFailure
          ? e.message
          : `${(e as Error)?.name}: ${(e as Error)?.message}`;
        result = {
          id: step.id,
          title: step.title,
          status: "fail",
          message,
          ms: Math.round(performance.now() - started),
        };
      }
    }
    steps.push(result);
    options.onStep?.(result);
  }
  return {
    url: base.href,
    steps,
    passed: steps.filter((s) => s.status === "pass").length,
    failed: steps.filter((s) => s.status === "fail").length,
    skipped: steps.filter((s) => s.status === "skip").length,
  };
}
