/**
 * The example app's event topics: pure data, imported by the route that publishes and by the
 * handlers that subscribe.
 *
 * @module
 */

import { Int, Min, MinLength, topic, Uuid } from "@fw/events/core";

/** Published by `POST /orders` once an order is accepted. */
export const OrderPlaced = topic("orders.placed", {
  id: Uuid,
  customer: MinLength(1),
  items: Min(1, Int),
  total: Min(0),
}, { channel: "orders" });
