/**
 * `serveLocalBroker()`: the local broker's HTTP server. This small module is all the `events()`
 * plugin loads at start to claim the port; the request handling (`local_broker.ts`, with the
 * envelope checks and the WebSocket subscriptions) loads on the first request.
 *
 * @module
 */

import type { Logger } from "@fw/runtime";
import type { MemoryBroker } from "../memory_broker.ts";

/** Options of {@linkcode serveLocalBroker}. */
export interface LocalBrokerOptions {
  /** Port (default 4222; 0 picks a free one). */
  port?: number;
  /** Address (default 127.0.0.1). */
  hostname?: string;
  /** Logger for connection errors. */
  logger?: Logger;
}

/** A running local broker. */
export interface LocalBroker {
  /** Base URL, for example `http://127.0.0.1:4222`. */
  readonly url: string;
  /** Bound port. */
  readonly port: number;
  /** Stops the server and drops subscriber connections (their deliveries are redelivered). */
  close(): Promise<void>;
}

/**
 * Serves a memory broker over HTTP and WebSockets (the protocol is described in
 * `local_broker.ts`).
 *
 * @param broker The in-process broker to share, or a function that gives it (called on the first
 *   request that needs it: the `events()` plugin makes its broker on first use).
 * @param options Port, host and logger.
 * @returns The running server.
 * @throws {Deno.errors.AddrInUse} When the port is taken.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { MemoryBroker, serveLocalBroker } from "@fw/events";
 * const broker = new MemoryBroker();
 * const server = serveLocalBroker(broker, { port: 0 });
 * const res = await fetch(`${server.url}/health`);
 * assert.deepEqual(await res.json(), { broker: "fw-local", protocol: 1 });
 * await server.close();
 * await broker.close();
 * ```
 */
export function serveLocalBroker(
  broker: MemoryBroker | (() => Promise<MemoryBroker>),
  options: LocalBrokerOptions = {},
): LocalBroker {
  const get = typeof broker === "function" ? broker : () => Promise.resolve(broker);
  const sockets = new Set<WebSocket>();
  const hostname = options.hostname ?? "127.0.0.1";
  let handler: Promise<(req: Request) => Promise<Response>> | undefined;
  const server = Deno.serve({
    port: options.port ?? 4222,
    hostname,
    onListen: () => {},
  }, async (req) => {
    handler ??= import("./local_broker.ts").then((m) =>
      m.brokerHandler(get, sockets, options.logger)
    );
    return (await handler)(req);
  });
  const addr = server.addr as Deno.NetAddr;
  return {
    url: `http://${hostname}:${addr.port}`,
    port: addr.port,
    async close() {
      for (const ws of sockets) {
        try {
          ws.close(1001, "broker stopping");
        } catch { /* already closed */ }
      }
      await server.shutdown();
    },
  };
}
