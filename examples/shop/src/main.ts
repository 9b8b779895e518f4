/**
 * The shop example: a small online shop as a real service would be built with fw.
 *
 * - REST API with validation: `GET /products`, `GET /products/:sku`, `POST /orders`,
 *   `GET /orders/:id`; admin routes under `/admin` need a bearer token with the `shop:admin`
 *   scope (`oauth()` with an HS256 secret from `SHOP_JWT_SECRET`).
 * - Deno KV holds products and orders (`SHOP_KV_PATH`; `:memory:` in tests) and carries the
 *   events (`@fw/events/denokv`): `shop.orders.placed` is charged by the payments handler with
 *   retries; orders whose payment keeps failing end as dead letters, which
 *   `GET /admin/dead-letters` lists and `POST /admin/dead-letters/redrive` sends again.
 * - A live dashboard at `/`: a page whose script (`dashboard.ts`, bundled for the browser by
 *   `deno task generate`) reads `GET /orders/live` (Server-Sent Events) and places orders through
 *   the typed client of `@fw/application/client`.
 * - A stock report every 15 minutes (`reports.ts`, a cron schedule run once across instances).
 * - The operations dashboard of `@fw/dashboard` at `/_fw/` (admin scope): routes, topics,
 *   handlers, queues, dead letters (with redrive from the page), the stock report's runs and the
 *   last traces (`telemetry()` traces every request, publish and handler attempt).
 * - `SHOP_REDIS_URL` carries the events over Redis Streams instead of Deno KV.
 *
 * ```sh
 * deno task dev:shop    # then open http://127.0.0.1:8000/
 * ```
 *
 * @module
 */

import { api, type Application, application, http, type Plugin } from "@fw/application";
import { oauth } from "@fw/application/oauth";
import { telemetry } from "@fw/application/telemetry";
import { dashboard } from "@fw/dashboard";
import { events, type Transport } from "@fw/events";
import { denoKvTransport } from "@fw/events/denokv";
import { kvStreamTransport } from "@fw/events/kvstore";
import type { Logger } from "@fw/runtime";
import livePage from "../public/dashboard.html" with { type: "text" };
import dashboardScript from "./.gen/dashboard.js" with { type: "text" };
import { ADMIN_SCOPE, loadConfig, type ShopConfig } from "./config.ts";
import { stockReport } from "./reports.ts";
import { DeadLetters, Store } from "./services.ts";
import { ShopStore } from "./store.ts";
import routes from "./.gen/api.gen.ts";
import handlers from "./.gen/events.gen.ts";

/**
 * Serves the dashboard page at `/` and its script at `/dashboard.js` (the browser bundle of
 * `dashboard.ts`; both bundled with the code: no file is read at run time).
 */
function dashboardPage(): Plugin {
  return {
    name: "live-page",
    warmup(ctx) {
      const headers = { "content-type": "text/html; charset=utf-8" };
      ctx.addRoute({
        method: "GET",
        path: "/",
        handler: () => new Response(livePage, { headers }),
      });
      const script = { "content-type": "text/javascript; charset=utf-8" };
      ctx.addRoute({
        method: "GET",
        path: "/dashboard.js",
        handler: () => new Response(dashboardScript, { headers: script }),
      });
    },
  };
}

/** Options of {@linkcode shopApp}. */
export interface ShopAppOptions {
  /** Settings that win over the environment variables. */
  config?: Partial<ShopConfig>;
  /** Interface to listen on (default 127.0.0.1). */
  hostname?: string;
  /** Stop on SIGINT/SIGTERM (default true). */
  signals?: boolean;
  /** Add the sample products to an empty catalogue (default true). */
  seed?: boolean;
  /** Logger (default: the console). */
  logger?: Logger;
}

/**
 * Builds the shop application.
 *
 * @throws {Error} When `SHOP_JWT_SECRET` is missing or shorter than 32 characters.
 */
export function shopApp(options: ShopAppOptions = {}): Application {
  const config = loadConfig(options.config);
  const transport: Transport = config.redisUrl !== undefined
    ? kvStreamTransport({ url: config.redisUrl, keyPrefix: config.redisPrefix ?? "shop:" })
    : denoKvTransport({
      ...(config.kvPath !== undefined ? { path: config.kvPath } : {}),
      keyPrefix: "shop",
    });
  const report = stockReport(config.reportCron, () => app.context.logger);
  const bus = events({ manifest: handlers, transport, schedules: [report] });
  const app = application({
    root: import.meta.url,
    ...(options.logger ? { logger: options.logger } : {}),
  })
    .use(http({
      port: config.port,
      hostname: options.hostname ?? "127.0.0.1",
      ...(options.signals !== undefined ? { signals: options.signals } : {}),
    }))
    .use(
      oauth({ issuer: config.jwtIssuer, audience: config.jwtAudience, secret: config.jwtSecret }),
    )
    .use(telemetry())
    .use(dashboard({ secure: { scopes: [ADMIN_SCOPE] } }))
    .use(dashboardPage())
    .use(api({
      manifest: routes,
      openapi: { title: "Shop", version: "1.0.0", description: "Products, orders and admin" },
      streams: { heartbeatMs: 15_000, retryMs: 2_000 },
    }))
    .use(bus);
  app.container
    .provide(Store, {
      factory: () => ShopStore.open(config.kvPath, options.seed ?? true),
      dispose: (store) => store.close(),
    })
    .provide(DeadLetters, { value: bus });
  return app;
}

if (import.meta.main) {
  const app = shopApp();
  await app.start();
  console.log(`fw shop: open ${app.address?.url}/ (API description at /openapi.json)`);
}
