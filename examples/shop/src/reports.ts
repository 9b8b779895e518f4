/**
 * The stock report: a cron schedule (`SHOP_REPORT_CRON`, every 15 minutes by default) that reads
 * the catalogue and warns about each product running low. It runs once per tick however many
 * instances of the shop are up (its state is kept by the events transport: Deno KV or Redis), and
 * its runs show in the operations dashboard's Schedules view, each with its trace and log lines.
 *
 * @module
 */

import { schedule, type ScheduleDefinition } from "@fw/events";
import type { Logger } from "@fw/runtime";
import { Store } from "./services.ts";

/** Stock below this is reported as low. */
export const LOW_STOCK = 10;

/**
 * The stock report schedule.
 *
 * @param cron When it runs (5 fields, or 6 with seconds first).
 * @param logger The application's logger, once it exists.
 * @returns The schedule, for `events({ schedules })`.
 */
export function stockReport(cron: string, logger: () => Logger): ScheduleDefinition {
  return schedule("stock-report")
    .options({ cron, maxRetries: 1 })
    .inject({ store: Store })
    .handle(async ({ store }) => {
      const log = logger();
      const products = await store.listProducts();
      const low = products.filter((p) => p.stock < LOW_STOCK);
      for (const p of low) log.warn("low stock", { sku: p.sku, stock: p.stock });
      log.info("stock report", { products: products.length, low: low.length });
    });
}
