/**
 * The shop's schemas: what the API accepts and returns, shared by routes, topics and the store.
 *
 * @module
 */

import {
  ArrayOf,
  DateIso,
  Email,
  type InferSchema,
  Int,
  Max,
  MaxLength,
  Min,
  MinLength,
  Optional,
  Pattern,
  schema,
  Uuid,
} from "@fw/application";

/** A stock-keeping unit: 3 to 32 upper-case letters, digits and dashes. */
export const Sku = Pattern(/^[A-Z0-9-]{3,32}$/);

/** A product in the catalogue; prices are in cents. */
export const Product = schema("Product", {
  sku: Sku,
  name: MinLength(1, MaxLength(120)),
  price: Min(0, Int),
  stock: Min(0, Int),
});
/** A product. */
export type Product = InferSchema<typeof Product>;

/** What an admin sends to create or change a product (`PUT /admin/products/:sku`). */
export const ProductInput = {
  name: MinLength(1, MaxLength(120)),
  price: Min(0, Int),
  stock: Min(0, Int),
};

/** One line of an order as the customer sends it. */
export const OrderLineInput = { sku: Sku, qty: Min(1, Max(100, Int)) };

/** The body of `POST /orders`. */
export const OrderInput = {
  customer: Email,
  items: ArrayOf(OrderLineInput),
  /** A card token from the payment provider (`tok_visa`, `tok_declined`, `tok_flaky` here). */
  paymentToken: MinLength(1, MaxLength(64)),
};

/** An order's state: `pending` until paid, `paid`, or `payment_failed` once retries ran out. */
export const OrderStatus = Pattern(/^(pending|paid|payment_failed)$/);
/** An order's state. */
export type OrderStatus = "pending" | "paid" | "payment_failed";

/** A stored order; `total` is in cents, computed from the catalogue prices. */
export const Order = schema("Order", {
  id: Uuid,
  customer: Email,
  items: ArrayOf({ sku: Sku, qty: Int, price: Int }),
  total: Int,
  status: OrderStatus,
  createdAt: DateIso,
  updatedAt: DateIso,
  failure: Optional(String),
});
/** An order. */
export type Order = InferSchema<typeof Order> & { status: OrderStatus };

/** What the live dashboard shows of an order (no customer data). */
export const OrderSummary = schema("OrderSummary", {
  id: Uuid,
  status: OrderStatus,
  total: Int,
  items: Int,
  updatedAt: DateIso,
});
/** An order summary. */
export type OrderSummary = InferSchema<typeof OrderSummary>;

/** The summary of an order. */
export function summaryOf(order: Order): OrderSummary {
  return {
    id: order.id,
    status: order.status,
    total: order.total,
    items: order.items.reduce((n, line) => n + line.qty, 0),
    updatedAt: order.updatedAt,
  };
}

/** A dead letter as the admin API shows it. */
export const DeadLetterView = schema("DeadLetter", {
  id: String,
  topic: String,
  handler: String,
  attempts: Int,
  error: String,
  deadAt: DateIso,
  orderId: Optional(String),
});
/** A dead letter as the admin API shows it. */
export type DeadLetterView = InferSchema<typeof DeadLetterView>;
