/**
 * Helpers for the shop example's tests: the app on a throw-away in-memory Deno KV, admin tokens,
 * a switchable payment gateway and polling.
 *
 * @module
 */

import type { Application } from "@fw/application";
import { createLogger, MemorySink } from "@fw/runtime";
import { shopApp } from "../examples/shop/src/main.ts";
import type { ShopConfig } from "../examples/shop/src/config.ts";
import type { Charge, PaymentGateway } from "../examples/shop/src/payments.ts";
import { FakeGateway, PaymentError } from "../examples/shop/src/payments.ts";
import { Payments } from "../examples/shop/src/services.ts";
import { signToken } from "../examples/shop/src/token.ts";

export const SECRET = "shop-test-secret-0123456789abcdef-xyz";

/** The stand-in gateway, plus an outage switch. */
export class SwitchableGateway implements PaymentGateway {
  readonly fake: FakeGateway = new FakeGateway();
  down = false;
  calls = 0;

  charge(charge: Charge): Promise<void> {
    this.calls++;
    if (this.down) return Promise.reject(new PaymentError("Payment provider unavailable"));
    return this.fake.charge(charge);
  }
}

/** A completion log entry of the event consumer. */
export interface Handled {
  /** 1-based attempt. */
  attempt: number;
  /** `acked`, `retry`, `dead-lettered`... */
  outcome: string;
  /** The message id. */
  messageId: string;
}

/**
 * Set by the contract test (tests/contract_prism_test.ts): a Stoplight Prism proxy in front of
 * the shop on port `FW_SHOP_PORT`. `RunningShop.request()` then goes through it and fails on
 * any violation of the OpenAPI document it reports, and logs each request to `FW_SHOP_PROXY_LOG`.
 */
const PROXY = Deno.env.get("FW_SHOP_PROXY");

/** Statuses with which fw refuses a request that the document forbids too. */
const REFUSED = new Set([400, 401, 403, 406, 413, 415]);

interface Violation {
  location: string[];
  message: string;
}

async function throughProxy(path: string, init?: RequestInit): Promise<Response> {
  const res = await fetch(PROXY + path, init);
  const violations: Violation[] = JSON.parse(res.headers.get("sl-violations") ?? "[]");
  const method = init?.method ?? "GET";
  const line = { method, path, status: res.status, violations };
  await Deno.writeTextFile(Deno.env.get("FW_SHOP_PROXY_LOG")!, JSON.stringify(line) + "\n", {
    append: true,
  });
  const wrong = violations.filter((v) => v.location[0] === "response" || !REFUSED.has(res.status));
  if (wrong.length > 0) {
    throw new Error(
      `OpenAPI violations on ${method} ${path} (${res.status}): ` +
        wrong.map((v) => `${v.location.join(".")}: ${v.message}`).join("; "),
    );
  }
  return res;
}

/** A running shop for one test. */
export interface RunningShop {
  /** The application. */
  app: Application;
  /** Its log records. */
  logs: MemorySink;
  /** The payment gateway it uses. */
  gateway: SwitchableGateway;
  /** Its base URL. */
  url: string;
  /** `app.request()`, or through the contract test's Prism proxy when it runs the tests. */
  request(path: string, init?: RequestInit): Promise<Response>;
  /** An admin token (or one with another scope). */
  token(scope?: string): Promise<string>;
  /** `message handled` log entries of one topic. */
  handled(topic: string): Handled[];
  /** Stops it. */
  stop(): Promise<void>;
}

/**
 * The shop on port 0 with `:memory:` Deno KV (or what `config` says, such as a Redis URL),
 * started; stop it with `stop()`.
 */
export async function startShop(config: Partial<ShopConfig> = {}): Promise<RunningShop> {
  const logs = new MemorySink();
  const gateway = new SwitchableGateway();
  const app = shopApp({
    config: {
      port: PROXY ? Number(Deno.env.get("FW_SHOP_PORT")) : 0,
      kvPath: ":memory:",
      jwtSecret: SECRET,
      ...config,
    },
    signals: false,
    logger: createLogger({ sink: logs, level: "info" }),
  });
  app.container.override(Payments, { value: gateway });
  await app.start();
  return {
    app,
    logs,
    gateway,
    url: app.address!.url,
    request: (path, init) => PROXY ? throughProxy(path, init) : app.request(path, init),
    token: (scope?: string) =>
      signToken({ secret: SECRET, issuer: "shop-dev", audience: "shop-api", scope }),
    handled: (topic) =>
      logs.records
        .filter((r) => r.message === "message handled")
        .map((r) => r.fields.event as Handled & { topic: string })
        .filter((e) => e.topic === topic),
    stop: () => app.stop(),
  };
}

/** Calls `probe` every 20 ms until it returns a truthy value (10 s at most). */
export async function eventually<T>(probe: () => Promise<T> | T, what: string): Promise<T> {
  const deadline = Date.now() + 10_000;
  for (;;) {
    const value = await probe();
    if (value) return value;
    if (Date.now() > deadline) throw new Error(`Timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

/** A JSON POST. */
export function post(body: unknown, headers: Record<string, string> = {}): RequestInit {
  return {
    method: "POST",
    headers: { "content-type": "application/json", ...headers },
    body: JSON.stringify(body),
  };
}
