/**
 * `eventServer({...})`: the Event Server plugin. It serves the `fw.events.v1` protocol on an
 * application: the discovery document, HTTP publish, one WebSocket endpoint multiplexing any
 * number of subscriptions, and an SSE endpoint per topic, all fed by a realtime broker.
 *
 * Routes (with the default `basePath` `/events`):
 *
 * | route | what |
 * | --- | --- |
 * | `GET /.well-known/fw/events` | discovery document |
 * | `POST /events/publish` | publish one message (idempotent on its id) |
 * | `GET /events/ws` | WebSocket upgrade |
 * | `GET /events/sse/:topic` | SSE stream of one topic |
 *
 * @module
 */

import {
  type AppContext,
  type AuthUser,
  type Clock,
  type Plugin,
  runInNewContext,
  tryContext,
} from "@fw/runtime";
import { toJsonSchema } from "@fw/runtime/json-schema";
import { DISCOVERY_PATH, type DiscoveryDocument, EVENTS_PROTOCOL } from "../protocol/frames.ts";
import { memoryRealtime } from "../realtime/memory_realtime.ts";
import type { RealtimeBroker } from "../realtime/realtime.ts";
import { isTopic, type Topic } from "../topic.ts";
import { busOf, needBus } from "../publisher.ts";
import { type AccessRule, ServerCore, type TopicAction } from "./_core.ts";
import { type CorsOrigins, httpError, preflight, withCors } from "./_http.ts";
import { IdempotencyWindow } from "./_idempotency.ts";
import { publish } from "./_publish.ts";
import { serveSse } from "./_sse.ts";
import { WsConnection } from "./_ws_connection.ts";

export type { AccessRule, TopicAction };

/** The (empty) async context WebSocket connections run in. */
const CONNECTION_CONTEXT: Record<string, unknown> = Object.freeze({});

/** Options of {@linkcode eventServer}. */
export interface EventServerOptions {
  /** The topics clients may use (at least one); others are refused as unknown. */
  topics: readonly Topic[];
  /** The realtime broker (default: an in-memory one, closed when the app stops). */
  realtime?: RealtimeBroker;
  /**
   * Who may subscribe to or publish on what: `(user, topic, action) => boolean`. `user` is the
   * identity `oauth()` verified (from the bearer token of the request, or of the WebSocket
   * `hello`), `undefined` for an anonymous client. Default: everyone may do everything.
   */
  access?: AccessRule;
  /**
   * Verifies a token sent in a WebSocket `hello` frame (browsers cannot set headers on a
   * WebSocket): pass the `verify` of your `oauth()` plugin. Without it, `hello` tokens are refused.
   */
  verifyToken?: (token: string) => Promise<AuthUser>;
  /** Prefix of the publish, WebSocket and SSE paths (default `/events`). */
  basePath?: string;
  /** Largest incoming WebSocket frame in bytes (default 65,536). */
  maxFrameBytes?: number;
  /** Largest publish body in bytes (default 1 MiB). */
  maxPublishBytes?: number;
  /** Subscriptions per WebSocket connection (default 100). */
  maxSubscriptions?: number;
  /**
   * Unsent bytes one client may have queued before it is disconnected as a slow consumer (close
   * code 4008 on WebSocket, an `error` event on SSE). Default 1 MiB.
   */
  maxBufferedBytes?: number;
  /** Interval of server pings and SSE heartbeats in ms (default 25,000; 0 turns them off). */
  pingIntervalMs?: number;
  /** How long accepted publish ids are remembered for idempotent retries (default 10 minutes). */
  idempotencyWindowMs?: number;
  /** Most publish ids remembered (default 100,000). */
  maxIdempotencyKeys?: number;
  /**
   * Also hand published messages to the app's `events()` bus when it has handlers for the topic
   * (default true), so server-side handlers see client publishes with their trace id.
   */
  forwardToHandlers?: boolean;
  /**
   * Origins whose browser pages may publish and open SSE streams (`Access-Control-Allow-Origin`,
   * and the preflight of `POST /events/publish`), or `"*"`. Default: none (same origin only).
   * The discovery document is readable from any origin, and WebSockets need no CORS.
   */
  corsOrigins?: "*" | readonly string[];
  /** List the topics and their payload schemas in the discovery document (default true). */
  listTopics?: boolean;
  /** Clock for heartbeats and the idempotency window (default the application's). */
  clock?: Clock;
}

/** The plugin, with its state once started. */
export interface EventServerPlugin extends Plugin {
  /** The realtime broker in use (after setup). */
  readonly realtime: RealtimeBroker | undefined;
  /** Open WebSocket connections and SSE streams. */
  readonly connections: number;
  /**
   * Subscriptions per topic now, and connections closed for being too slow since start (the
   * operations dashboard shows them).
   */
  stats(): EventServerStats;
  /** The discovery document (after setup). */
  readonly discovery: DiscoveryDocument | undefined;
}

function fail(detail: string): never {
  throw new TypeError(`Invalid eventServer() option ${detail}`);
}

function limit(value: number | undefined, name: string, fallback: number, min = 1): number {
  if (value === undefined) return fallback;
  if (!Number.isInteger(value) || value < min) {
    fail(`"${name}": expected an integer >= ${min}, got "${value}"`);
  }
  return value;
}

function topicMap(topics: unknown): Map<string, Topic> {
  if (!Array.isArray(topics) || topics.length === 0) {
    fail('"topics": expected a non-empty array of topics');
  }
  const map = new Map<string, Topic>();
  topics.forEach((t, i) => {
    if (!isTopic(t)) fail(`"topics[${i}]": expected a topic made with topic()`);
    if (map.has(t.name)) fail(`"topics[${i}]": topic "${t.name}" is listed twice`);
    map.set(t.name, t);
  });
  return map;
}

/** What {@linkcode EventServerPlugin.stats} answers. */
export interface EventServerStats {
  /** Open WebSocket connections and SSE streams. */
  readonly connections: number;
  /** Subscriptions per topic (WebSocket subscriptions and SSE streams). */
  readonly subscriptions: Record<string, number>;
  /** Connections closed because they did not read fast enough, since start. */
  readonly slowConsumerCloses: number;
}

/**
 * Creates the Event Server plugin. Use it after `http()` (and after `oauth()` when clients
 * authenticate) so that its routes see the verified user.
 *
 * Published messages go to the realtime broker, which feeds every WebSocket and SSE subscriber;
 * when the application also runs `events()` with handlers for the topic, they go to its bus
 * first (set `forwardToHandlers: false` to turn that off).
 *
 * @param options Topics, realtime broker, access rule and limits.
 * @returns The plugin for `application().use()`.
 * @throws {TypeError} At once, for invalid options (named).
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { application } from "@fw/application";
 * import { Int, topic } from "@fw/events";
 * import { eventServer } from "@fw/events/server";
 *
 * const Ticks = topic("clock.tick", { n: Int });
 * const app = application().use(eventServer({ topics: [Ticks] }));
 * const res = await app.request("/events/publish", {
 *   method: "POST",
 *   headers: { "content-type": "application/json" },
 *   body: JSON.stringify({ id: "m-1", topic: "clock.tick", payload: { n: 1 } }),
 * });
 * assert.equal(res.status, 200);
 * assert.equal((await res.json()).outcome, "accepted");
 * const discovery = await (await app.request("/.well-known/fw/events")).json();
 * assert.equal(discovery.protocol, "fw.events.v1");
 * await app.stop();
 * ```
 */
export function eventServer(options: EventServerOptions): EventServerPlugin {
  if (typeof options !== "object" || options === null) fail("object: expected an object");
  const topics = topicMap(options.topics);
  const base = options.basePath ?? "/events";
  if (typeof base !== "string" || !/^(\/[A-Za-z0-9._~-]+)+$/.test(base)) {
    fail(`"basePath": expected a path such as "/events", got "${String(base)}"`);
  }
  if (options.access !== undefined && typeof options.access !== "function") {
    fail('"access": expected a function (user, topic, action) => boolean');
  }
  if (options.verifyToken !== undefined && typeof options.verifyToken !== "function") {
    fail('"verifyToken": expected a function (token) => Promise<user>');
  }
  const realtimeGiven = options.realtime;
  if (
    realtimeGiven !== undefined &&
    (typeof realtimeGiven?.publish !== "function" || typeof realtimeGiven?.subscribe !== "function")
  ) {
    fail('"realtime": expected a realtime broker');
  }
  const limits = {
    maxFrameBytes: limit(options.maxFrameBytes, "maxFrameBytes", 64 * 1024, 256),
    maxPublishBytes: limit(options.maxPublishBytes, "maxPublishBytes", 1024 * 1024, 256),
    maxSubscriptions: limit(options.maxSubscriptions, "maxSubscriptions", 100),
    maxBufferedBytes: limit(options.maxBufferedBytes, "maxBufferedBytes", 1024 * 1024, 1024),
    pingIntervalMs: limit(options.pingIntervalMs, "pingIntervalMs", 25_000, 0),
    idempotencyWindowMs: limit(options.idempotencyWindowMs, "idempotencyWindowMs", 600_000, 0),
    maxIdempotencyKeys: limit(options.maxIdempotencyKeys, "maxIdempotencyKeys", 100_000),
  };
  const given = options.corsOrigins;
  if (
    given !== undefined && given !== "*" &&
    !(Array.isArray(given) &&
      given.every((o) => typeof o === "string" && /^https?:\/\/[^/]+$/.test(o)))
  ) {
    fail('"corsOrigins": expected "*" or a list of origins such as "https://app.example"');
  }
  const cors: CorsOrigins | undefined = given === undefined
    ? undefined
    : given === "*"
    ? "*"
    : new Set(given);
  let core: ServerCore | undefined;
  let window: IdempotencyWindow | undefined;
  let discovery: DiscoveryDocument | undefined;
  let owned: RealtimeBroker | undefined;

  const userOf = () => tryContext<{ user?: AuthUser }>()?.user;

  return {
    name: "eventServer",
    get realtime() {
      return core?.realtime;
    },
    get connections() {
      return core?.live.size ?? 0;
    },
    stats() {
      const subscriptions: Record<string, number> = {};
      for (const client of core?.live ?? []) {
        for (const t of client.topics()) subscriptions[t] = (subscriptions[t] ?? 0) + 1;
      }
      return {
        connections: core?.live.size ?? 0,
        subscriptions,
        slowConsumerCloses: core?.slowConsumerCloses ?? 0,
      };
    },
    get discovery() {
      return discovery;
    },
    setup(ctx: AppContext) {
      // messages are forwarded to this app's handlers through busOf(): the bus must exist at start
      if (options.forwardToHandlers !== false) needBus(ctx.container);
      const clock = options.clock ?? ctx.clock;
      const realtime = realtimeGiven ??
        (owned = memoryRealtime({ clock, logger: ctx.logger }));
      core = new ServerCore(
        topics,
        realtime,
        options.access ?? (() => true),
        limits,
        clock,
        ctx.logger,
        options.verifyToken,
        options.forwardToHandlers !== false ? () => busOf(ctx.container) : () => undefined,
      );
      window = new IdempotencyWindow(limits.idempotencyWindowMs, limits.maxIdempotencyKeys, clock);
      discovery = {
        protocol: EVENTS_PROTOCOL,
        profiles: ["http", "websocket", "sse"],
        endpoints: {
          publish: `${base}/publish`,
          websocket: `${base}/ws`,
          sse: `${base}/sse/{topic}`,
        },
        features: {
          multiplex: true,
          resume: realtime.capabilities.replay,
          idempotentPublish: limits.idempotencyWindowMs > 0,
          traceContext: true,
          bearerAuth: true,
          helloToken: options.verifyToken !== undefined,
          delayedPublish: true,
        },
        limits: {
          maxFrameBytes: limits.maxFrameBytes,
          maxPublishBytes: limits.maxPublishBytes,
          maxSubscriptions: limits.maxSubscriptions,
          maxBufferedBytes: limits.maxBufferedBytes,
          pingIntervalMs: limits.pingIntervalMs,
          idempotencyWindowMs: limits.idempotencyWindowMs,
        },
        topics: options.listTopics === false ? [] : [...topics.values()].map((t) => ({
          name: t.name,
          ...(t.channel !== undefined ? { channel: t.channel } : {}),
          ...(t.version !== undefined ? { version: t.version } : {}),
          schema: toJsonSchema(t.schema),
        })),
      };
      const doc = JSON.stringify(discovery);
      ctx.addRoute({
        method: "GET",
        path: DISCOVERY_PATH,
        source: "eventServer()",
        handler: () =>
          new Response(doc, {
            headers: {
              "content-type": "application/json; charset=utf-8",
              "cache-control": "max-age=60",
              "access-control-allow-origin": "*",
            },
          }),
      });
      ctx.addRoute({
        method: "POST",
        path: `${base}/publish`,
        source: "eventServer()",
        handler: async (req) => withCors(await publish(core!, window!, req), req, cors),
      });
      ctx.addRoute({
        method: "OPTIONS",
        path: `${base}/publish`,
        source: "eventServer()",
        handler: (req) => preflight(req, cors),
      });
      ctx.addRoute({
        method: "GET",
        path: `${base}/ws`,
        source: "eventServer()",
        handler: (req) => {
          if (req.headers.get("upgrade")?.toLowerCase() !== "websocket") {
            return httpError(
              "invalid_request",
              'This endpoint expects a WebSocket upgrade ("Upgrade: websocket")',
            );
          }
          if (core!.stopping) {
            return httpError("unavailable", "The server is stopping", { retryAfterMs: 1000 });
          }
          let upgraded: { socket: WebSocket; response: Response };
          try {
            upgraded = Deno.upgradeWebSocket(req, { idleTimeout: 0 });
          } catch (error) {
            return httpError(
              "invalid_request",
              `Invalid WebSocket upgrade: ${(error as Error).message}`,
            );
          }
          const { socket, response } = upgraded;
          // Outside the request's context: the socket's listeners would otherwise keep the
          // request (and its context) alive for the connection's lifetime.
          const user = userOf();
          runInNewContext(CONNECTION_CONTEXT, () => new WsConnection(core!, socket, user));
          return response;
        },
      });
      ctx.addRoute({
        method: "GET",
        path: `${base}/sse/:topic`,
        source: "eventServer()",
        handler: async (req, params) =>
          withCors(await serveSse(core!, req, params.topic, userOf()), req, cors),
      });
    },
    start() {
      core?.start();
    },
    async stopping() {
      // after http()'s drain delay (plugins run this in order): clients are told to reconnect
      // (WebSocket 1001, SSE end) before the listener drains, which would otherwise wait for them
      await core?.stop();
    },
    async stop() {
      await core?.stop();
      await owned?.close();
      owned = undefined;
    },
  };
}
