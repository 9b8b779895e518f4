/**
 * The cluster example's topics: `cluster.order.placed` is a durable event (PostgreSQL transport,
 * published in the order's own transaction); `cluster.orders.live` is the realtime topic browsers
 * follow through the Event Server (Redis Streams, so any instance can resume a subscriber).
 *
 * @module
 */

import { Int, topic, Uuid } from "@fw/events";

/** An order was accepted (published in the transaction that wrote it). */
export const OrderPlaced = topic("cluster.order.placed", { id: Uuid, qty: Int });

/** The live feed of accepted orders, one message per handled `OrderPlaced`. */
export const LiveOrders = topic("cluster.orders.live", { id: Uuid, qty: Int });
