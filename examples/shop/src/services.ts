/**
 * The shop's services, provided through dependency injection. `shopApp()` binds the store and
 * the dead-letter access; tests override any of them with `app.container.override()`.
 *
 * @module
 */

import type { EventsPlugin } from "@fw/events";
import { provider } from "@fw/runtime";
import { LiveOrders } from "./live.ts";
import { FakeGateway, type PaymentGateway } from "./payments.ts";
import type { ShopStore } from "./store.ts";

/** The Deno KV store (bound by `shopApp()` to the configured database). */
export const Store = provider<ShopStore>({ name: "Store" });

/** The payment provider (the stand-in one unless overridden). */
export const Payments = provider<PaymentGateway>({
  name: "Payments",
  factory: () => new FakeGateway(),
});

/** The live feed of this instance's dashboards. */
export const Live = provider({ name: "Live", factory: () => new LiveOrders() });

/** Dead letters of the application's event transports (bound to its `events()` plugin). */
export const DeadLetters = provider<Pick<EventsPlugin, "deadLetters" | "redrive">>({
  name: "DeadLetters",
});
