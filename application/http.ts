/**
 * `http()`: serves an application on `Deno.serve`. Port 0 picks a free port; the bound address
 * is on `app.address`. SIGINT and SIGTERM stop the application gracefully (in-flight requests
 * finish first).
 *
 * @module
 */

import type { AppContext, Plugin, ServerInfo } from "@fw/runtime";

/** Options of {@linkcode http}. */
export interface HttpOptions {
  /** TCP port; 0 picks a free one. Default: the `PORT` environment variable, else 8000. */
  port?: number;
  /** Interface to bind. Default `0.0.0.0`. */
  hostname?: string;
  /** Largest accepted request body in bytes (default 1 MiB); larger bodies get 413. */
  maxBodyBytes?: number;
  /** Trust `X-Forwarded-For` for the client address (rate-limit keys). Default false. */
  trustProxy?: boolean;
  /** Stop gracefully on SIGINT/SIGTERM (default true). */
  signals?: boolean;
}

function check(options: HttpOptions, portEnv: string | undefined): Required<HttpOptions> {
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
    trustProxy: options.trustProxy === true,
    signals: options.signals !== false,
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
  let settings: Required<HttpOptions>;
  let server: Deno.HttpServer<Deno.NetAddr> | undefined;
  let onSignal: (() => void) | undefined;
  return {
    name: "http",
    setup(ctx: AppContext) {
      settings = check(options, ctx.env("PORT"));
      ctx.setHttp({ maxBodyBytes: settings.maxBodyBytes, trustProxy: settings.trustProxy });
    },
    start(ctx: AppContext) {
      let info: ServerInfo = { hostname: settings.hostname, port: settings.port, url: "" };
      server = Deno.serve({
        port: settings.port,
        hostname: settings.hostname,
        onListen: () => {},
      }, (req, conn) => ctx.dispatch(req, { remoteAddr: conn.remoteAddr, server: info }));
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
          server?.shutdown().finally(() => Deno.exit(0));
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
      if (server) {
        await server.shutdown();
        server = undefined;
        ctx.setServer(undefined);
      }
    },
  };
}
