/**
 * `http()`: serves an application on `Deno.serve`. Port 0 picks a free port; the bound address
 * is on `app.address`. SIGINT and SIGTERM stop the whole application gracefully, then exit:
 * streams close, the listener closes, in-flight requests finish (up to `shutdownTimeoutMs`), then
 * the other plugins stop (events finish the deliveries they admitted and close their transports).
 *
 * @module
 */

import type { AppContext, Plugin, RequestInfo, ServerInfo } from "@fw/runtime";
import { type ProxyTrust, type TrustProxyOption, trustsNoProxy } from "./_proxy.ts";
import type { HealthOptions, HealthSettings } from "./_health.ts";

export type { TrustProxyOption } from "./_proxy.ts";
export type { HealthOptions } from "./_health.ts";

/** Connection facts with the peer address read only when asked (it costs a system call). */
class ConnInfo implements RequestInfo {
  constructor(readonly conn: Deno.ServeHandlerInfo<Deno.NetAddr>, readonly server: ServerInfo) {}
  get remoteAddr(): Deno.NetAddr {
    return this.conn.remoteAddr;
  }
}

/** What the readiness route reports: the application's phase, or ready for a bare context. */
function stateOf(ctx: AppContext): "starting" | "ready" | "stopping" {
  const phase = ctx.phase;
  if (phase === undefined || phase === "started") return "ready";
  return phase === "stopped" ? "stopping" : "starting";
}

/** Options of {@linkcode http}. */
export interface HttpOptions {
  /** TCP port; 0 picks a free one. Default: the `PORT` environment variable, else 8000. */
  port?: number;
  /** Interface to bind. Default `0.0.0.0`. */
  hostname?: string;
  /** Largest accepted request body in bytes (default 1 MiB); larger bodies get 413. */
  maxBodyBytes?: number;
  /**
   * Which peers may report the client's address (rate-limit keys), scheme (`ctx.secured()`) and
   * host (`ctx.host()`) through `Forwarded` (RFC 7239, preferred when present) or
   * `X-Forwarded-For` / `-Proto` / `-Host`. Default `false`: those headers are ignored.
   *
   * - `true`: the socket peer is a proxy, whatever its address (one hop).
   * - a number: that many hops, counting the socket peer, are proxies.
   * - addresses and CIDR ranges (`["10.0.0.0/8", "::1"]` or `"loopback, 10.0.0.0/8"`; `loopback`,
   *   `linklocal` and `uniquelocal` name the private ranges): exactly those peers are proxies.
   *
   * Headers from a peer that is not trusted are ignored entirely.
   */
  trustProxy?: TrustProxyOption;
  /** Stop gracefully on SIGINT/SIGTERM (default true). */
  signals?: boolean;
  /**
   * How long a graceful stop waits for in-flight requests, in milliseconds (default 10,000). Past
   * it, remaining connections are cut and the application stops anyway.
   */
  shutdownTimeoutMs?: number;
  /**
   * How long reading a request body may take, in milliseconds, once the handler asks for it
   * (default 30,000). A slower upload is answered 408 Request Timeout.
   */
  bodyTimeoutMs?: number;
  /**
   * Liveness and readiness routes for a load balancer or Kubernetes (default off). `true` serves
   * `GET /livez` (200 while the process serves) and `GET /readyz` (200 once the application has
   * started, 503 from the moment a stop begins); an object sets the paths and `drainDelayMs`, how
   * long a stop keeps serving with readiness at 503 before streams are told to reconnect and the
   * listener closes (default 5,000). Both routes are answered before any middleware.
   */
  health?: boolean | HealthOptions;
}

/** The health routes' module, loaded at setup with the `health` option. */
type HealthModule = typeof import("./_health.ts");

interface Settings {
  port: number;
  hostname: string;
  maxBodyBytes: number;
  proxyTrust: ProxyTrust | undefined;
  signals: boolean;
  shutdownTimeoutMs: number;
  bodyTimeoutMs: number;
  health: HealthSettings | undefined;
}

function duration(name: string, value: number | undefined, fallback: number): number {
  const ms = value ?? fallback;
  if (typeof ms !== "number" || !(ms > 0)) {
    throw new TypeError(
      `Invalid http() option "${name}": expected a positive number of milliseconds, got ${
        JSON.stringify(value)
      }`,
    );
  }
  return ms;
}

/**
 * Checks the options in order and resolves them. `compileTrust` (from `_trust_proxy.ts`) is
 * given when the `trustProxy` option is set, `health` (the health routes) when the `health`
 * option is.
 */
function check(
  options: HttpOptions,
  portEnv: string | undefined,
  compileTrust?: (option: unknown) => ProxyTrust | undefined,
  health?: HealthModule,
): Settings {
  const port = options.port ?? (portEnv !== undefined ? Number(portEnv) : 8000);
  if (!Number.isInteger(port) || port < 0 || port > 65535) {
    throw new TypeError(
      `http(): "port" must be an integer in 0..65535, got ${
        JSON.stringify(options.port ?? portEnv)
      }`,
    );
  }
  const maxBodyBytes = options.maxBodyBytes ?? 1024 * 1024;
  if (!Number.isInteger(maxBodyBytes) || maxBodyBytes < 0) {
    throw new TypeError(
      `http(): "maxBodyBytes" must be a non-negative integer, got ${options.maxBodyBytes}`,
    );
  }
  const hostname = options.hostname ?? "0.0.0.0";
  if (typeof hostname !== "string" || hostname === "") {
    throw new TypeError(`http(): "hostname" must be a non-empty string`);
  }
  return {
    port,
    hostname,
    maxBodyBytes,
    proxyTrust: compileTrust?.(options.trustProxy),
    signals: options.signals !== false,
    shutdownTimeoutMs: duration("shutdownTimeoutMs", options.shutdownTimeoutMs, 10_000),
    bodyTimeoutMs: duration("bodyTimeoutMs", options.bodyTimeoutMs, 30_000),
    health: health?.checkHealth(options.health),
  };
}

/**
 * Creates the HTTP server plugin.
 *
 * @param options Port, hostname, body limit, proxy trust, signal handling.
 * @returns The plugin.
 * @throws {TypeError} At start-up, for an invalid option (the message names it).
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { application, http } from "@fw/application";
 * const app = application().use(http({ port: 0, hostname: "127.0.0.1", signals: false })).use({
 *   name: "ping",
 *   warmup: (ctx) => ctx.addRoute({ method: "GET", path: "/ping", handler: () => new Response("pong") }),
 * });
 * await app.start();
 * const res = await fetch(`${app.address!.url}/ping`);
 * assert.equal(await res.text(), "pong");
 * await app.stop();
 * ```
 */
export function http(options: HttpOptions = {}): Plugin {
  let settings: Settings;
  let server: Deno.HttpServer<Deno.NetAddr> | undefined;
  let onSignal: (() => void) | undefined;
  let healthRoutes: HealthModule | undefined;
  /** Stops listening and waits for in-flight requests, up to `shutdownTimeoutMs`. */
  const drain = async (ctx: AppContext): Promise<void> => {
    const running = server;
    if (!running) return;
    server = undefined;
    let timer: ReturnType<typeof setTimeout> | undefined;
    const deadline = new Promise<"timeout">((resolve) => {
      timer = setTimeout(() => resolve("timeout"), settings.shutdownTimeoutMs);
    });
    const outcome = await Promise.race([running.shutdown(), deadline]);
    clearTimeout(timer);
    if (outcome === "timeout") {
      ctx.logger.warn(
        `In-flight requests still running after ${settings.shutdownTimeoutMs} ms (shutdownTimeoutMs): stopping anyway`,
      );
    }
    ctx.setServer(undefined);
  };
  return {
    name: "http",
    setup(ctx: AppContext) {
      const apply = (checked: Settings) => {
        settings = checked;
        ctx.setHttp({
          maxBodyBytes: settings.maxBodyBytes,
          trustProxy: settings.proxyTrust !== undefined,
          proxyTrust: settings.proxyTrust,
          bodyTimeoutMs: settings.bodyTimeoutMs,
        });
      };
      const trust = !trustsNoProxy(options.trustProxy);
      const health = options.health !== undefined && options.health !== false;
      if (!trust && !health) return apply(check(options, ctx.env("PORT")));
      // the address and range parsing, and the health routes, load only when their option is
      // given
      return Promise.all([
        trust ? import("./_trust_proxy.ts") : undefined,
        health ? import("./_health.ts") : undefined,
      ]).then(([proxy, routes]) => {
        healthRoutes = routes;
        apply(check(options, ctx.env("PORT"), proxy?.compileTrustProxy, routes));
      });
    },
    start(ctx: AppContext) {
      let info: ServerInfo = { hostname: settings.hostname, port: settings.port, url: "" };
      const health = settings.health;
      const state = () => stateOf(ctx);
      // Listening starts here, before the plugins used after http() have started (the event
      // bus, say): requests that come in that window wait until every plugin is up.
      const started = ctx.started;
      let open = started === undefined;
      void started?.then(() => open = true);
      const dispatch = (req: Request, conn: Deno.ServeHandlerInfo<Deno.NetAddr>) =>
        ctx.dispatch(req, new ConnInfo(conn, info));
      const gated: Deno.ServeHandler<Deno.NetAddr> = (req, conn) =>
        open ? dispatch(req, conn) : started!.then(() => dispatch(req, conn));
      const handler: Deno.ServeHandler<Deno.NetAddr> = health === undefined
        ? gated
        : (req, conn) => healthRoutes!.healthResponse(health, req, state) ?? gated(req, conn);
      server = Deno.serve({
        port: settings.port,
        hostname: settings.hostname,
        onListen: () => {},
      }, handler);
      const addr = server.addr;
      const host = addr.hostname === "0.0.0.0"
        ? "localhost"
        : addr.hostname.includes(":")
        ? `[${addr.hostname}]`
        : addr.hostname;
      info = { hostname: addr.hostname, port: addr.port, url: `http://${host}:${addr.port}` };
      ctx.setServer(info);
      ctx.logger.info(`Listening on ${info.url}`);
      if (settings.signals) {
        let stopping = false;
        onSignal = () => {
          if (stopping) return;
          stopping = true;
          ctx.logger.info("Signal received: stopping gracefully");
          const done = ctx.stop ? ctx.stop() : drain(ctx);
          done.then(() => Deno.exit(0), (err) => {
            ctx.logger.error("Stopping after a signal failed", { error: String(err) });
            Deno.exit(1);
          });
        };
        for (const sig of ["SIGINT", "SIGTERM"] as const) {
          try {
            Deno.addSignalListener(sig, onSignal);
          } catch {
            // signals are not available on this platform (Windows SIGTERM, Deploy)
          }
        }
      }
    },
    stopping(ctx: AppContext) {
      // readiness already answers 503 (the application's phase is "stopped"): keep serving while
      // the balancer notices, before streams are told to reconnect and the listener closes
      const ms = settings?.health?.drainDelayMs ?? 0;
      if (ms === 0 || server === undefined) return;
      ctx.logger.info(
        `Stopping: readiness answers 503, draining for ${ms} ms (health.drainDelayMs)`,
      );
      return new Promise<void>((resolve) => ctx.clock.setTimeout(resolve, ms));
    },
    drain(ctx: AppContext) {
      return drain(ctx);
    },
    async stop(ctx: AppContext) {
      if (onSignal) {
        for (const sig of ["SIGINT", "SIGTERM"] as const) {
          try {
            Deno.removeSignalListener(sig, onSignal);
          } catch {
            // not registered
          }
        }
        onSignal = undefined;
      }
      await drain(ctx);
    },
  };
}
