/**
 * One instance of the cluster example, meant to run three or more times behind a load balancer
 * (`deno task cluster` does, behind HAProxy):
 *
 * - `POST /orders` `{ id, qty }` writes the order and publishes `OrderPlaced` in one PostgreSQL
 *   transaction (the SQL transport's outbox); the client picks the id, so a retry of the same
 *   order is answered without a second row or a second event.
 * - `GET /orders/:id` reads it back.
 * - The `OrderPlaced` handler (one competing group across instances) publishes the order to the
 *   realtime topic `LiveOrders` on Redis Streams (`kvStream`), then records that it ran.
 * - The Event Server (`/events/ws`, `/events/sse/:topic`) serves `LiveOrders` to browsers; any
 *   instance resumes a subscriber after the last id it saw.
 * - `/livez` and `/readyz` (`http({ health })`): on SIGTERM readiness turns 503 and the instance
 *   keeps serving for `CLUSTER_DRAIN_MS` before it closes streams and the listener.
 *
 * Environment: `PORT`, `CLUSTER_DATABASE_URL`, `CLUSTER_SCHEMA` (tables from `db.ts`'s
 * `migrate`), `CLUSTER_REDIS_URL`, `CLUSTER_INSTANCE` (a name for logs and rows),
 * `CLUSTER_DRAIN_MS` (default 5000).
 *
 * @module
 */

import { api, application, endpoint, http, Int, NotFoundException, Uuid } from "@fw/application";
import { events, getPublisher, handler } from "@fw/events";
import { kvStream } from "@fw/events/kvstore";
import { eventServer } from "@fw/events/server";
import { sqlTransport } from "@fw/events/sql";
import { createLogger } from "@fw/runtime";
import { openDb } from "./db.ts";
import { LiveOrders, OrderPlaced } from "./topics.ts";

function required(name: string): string {
  const value = Deno.env.get(name);
  if (!value) throw new TypeError(`Missing environment variable "${name}"`);
  return value;
}

const databaseUrl = required("CLUSTER_DATABASE_URL");
const schema = required("CLUSTER_SCHEMA");
const redisUrl = required("CLUSTER_REDIS_URL");
const instance = Deno.env.get("CLUSTER_INSTANCE") ?? `pid-${Deno.pid}`;
const drainDelayMs = Number(Deno.env.get("CLUSTER_DRAIN_MS") ?? 5_000);

const logger = createLogger({ level: "warn" });
const db = openDb(databaseUrl, schema, 5);
const live = kvStream({
  url: redisUrl,
  keyPrefix: `${schema}:live:`,
  maxLen: 1_000_000,
  logger,
});
const placeOrder = getPublisher(OrderPlaced);

const routes = api({ autoScan: false })
  .route(
    "POST",
    "/orders",
    endpoint().body({ id: Uuid, qty: Int }).handle(async (ctx) => {
      const { id, qty } = await ctx.body();
      const created = await db.begin(async (tx) => {
        const rows =
          await tx`INSERT INTO orders (id, qty, instance) VALUES (${id}, ${qty}, ${instance})
          ON CONFLICT (id) DO NOTHING RETURNING id`;
        if (rows.length > 0) await placeOrder({ id, qty }, { tx });
        return rows.length > 0;
      });
      return { id, created };
    }),
  )
  .route(
    "GET",
    "/orders/:id",
    endpoint().params({ id: Uuid }).handle(async (ctx) => {
      const rows = await db`SELECT id, qty FROM orders WHERE id = ${ctx.params.id}`;
      if (rows.length === 0) throw new NotFoundException(`Order "${ctx.params.id}" not found`);
      return { id: rows[0].id as string, qty: rows[0].qty as number };
    }),
  );

const fulfil = handler(OrderPlaced)
  .options({ group: "fulfil", maxRetries: 30, maxBackoff: 2_000, timeout: 10_000 })
  .handle(async (m) => {
    // publish live first: a failure (Redis restarting) throws and the delivery is retried
    await live.publish(LiveOrders, m.payload);
    await db`INSERT INTO handled (order_id, instance, attempt)
      VALUES (${m.payload.id}, ${instance}, ${m.attempt})`;
  });

const app = application({ logger })
  // first, so that it stops last: handlers still finishing at stop use both
  .use({
    name: "resources",
    stop: async () => void await Promise.all([live.close(), db.end({ timeout: 5 })]),
  })
  .use(http({ health: { drainDelayMs }, shutdownTimeoutMs: 10_000 }))
  .use(routes)
  .use(eventServer({ topics: [LiveOrders], realtime: live }))
  .use(events({
    autoScan: false,
    handlers: [fulfil],
    transport: sqlTransport({
      url: databaseUrl,
      schema,
      poolSize: 3,
      consumerPoolSize: 2,
      applicationName: `fw-cluster-${instance}`,
    }),
  }));

await app.start();
console.log(JSON.stringify({ event: "listening", instance, pid: Deno.pid, url: app.address!.url }));
