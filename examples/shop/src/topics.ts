/**
 * The shop's event topics. `shop.orders.placed` drives payment (competing consumers, retries,
 * dead letters); `shop.orders.changed` tells every running instance's dashboards what changed.
 *
 * @module
 */

import { Int, MinLength, topic, Uuid } from "@fw/events";
import { OrderSummary } from "./schemas.ts";

/** Published by `POST /orders` once stock is reserved; the payments handler charges it. */
export const OrderPlaced = topic("shop.orders.placed", {
  orderId: Uuid,
  total: Int,
  paymentToken: MinLength(1),
});

/** Published on every change of an order's state; each instance forwards it to its dashboards. */
export const OrderChanged = topic("shop.orders.changed", OrderSummary);
