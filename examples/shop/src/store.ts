/**
 * The shop's persistence on Deno KV: products, orders and an index of orders by time. Placing an
 * order reserves stock in one atomic operation (retried when another order changed the same
 * products in between), so stock never goes below zero however many instances take orders.
 *
 * Keys: `["products", sku]`, `["orders", id]`, `["orders_by_time", createdAt, id]`.
 *
 * @module
 */

import { ConflictException, NotFoundException } from "@fw/application";
import type { Order, OrderStatus, Product } from "./schemas.ts";

/** Products a fresh database starts with. */
export const SEED_PRODUCTS: readonly Product[] = [
  { sku: "MUG-001", name: "Enamel mug", price: 1200, stock: 50 },
  { sku: "TEE-002", name: "Organic T-shirt", price: 2500, stock: 20 },
  { sku: "BAG-003", name: "Canvas tote bag", price: 1800, stock: 5 },
];

/** A line of an order as the customer asked for it. */
export interface OrderRequest {
  /** The customer's email address. */
  customer: string;
  /** Products and quantities. */
  items: { sku: string; qty: number }[];
}

/** The shop's data in one Deno KV database. */
export class ShopStore {
  /** The database handle. */
  readonly kv: Deno.Kv;

  constructor(kv: Deno.Kv) {
    this.kv = kv;
  }

  /**
   * Opens the database at `path` (a file, `":memory:"`, or the default database when undefined)
   * and seeds the catalogue when it is empty.
   */
  static async open(path: string | undefined, seed = true): Promise<ShopStore> {
    const store = new ShopStore(await Deno.openKv(path));
    if (seed) await store.seed(SEED_PRODUCTS);
    return store;
  }

  /** Adds the given products when the catalogue is empty. */
  async seed(products: readonly Product[]): Promise<void> {
    for await (const _ of this.kv.list({ prefix: ["products"] }, { limit: 1 })) return;
    for (const p of products) await this.putProduct(p);
  }

  /** Every product, by SKU. */
  async listProducts(): Promise<Product[]> {
    const out: Product[] = [];
    for await (const e of this.kv.list<Product>({ prefix: ["products"] })) out.push(e.value);
    return out;
  }

  /** One product, or undefined. */
  async getProduct(sku: string): Promise<Product | undefined> {
    return (await this.kv.get<Product>(["products", sku])).value ?? undefined;
  }

  /** Creates or replaces a product. */
  async putProduct(product: Product): Promise<Product> {
    await this.kv.set(["products", product.sku], product);
    return product;
  }

  /**
   * Reserves stock and stores a `pending` order, atomically.
   *
   * @throws {NotFoundException} For an unknown SKU.
   * @throws {ConflictException} When a product has too little stock.
   */
  async placeOrder(request: OrderRequest, now: Date = new Date()): Promise<Order> {
    const wanted = new Map<string, number>();
    for (const { sku, qty } of request.items) wanted.set(sku, (wanted.get(sku) ?? 0) + qty);
    const keys = [...wanted.keys()].map((sku) => ["products", sku]);
    for (let attempt = 0; attempt < 20; attempt++) {
      const entries = await this.kv.getMany<Product[]>(keys);
      const op = this.kv.atomic();
      const items: Order["items"] = [];
      for (const entry of entries) {
        const sku = entry.key[1] as string;
        const qty = wanted.get(sku)!;
        if (entry.value === null) throw new NotFoundException(`Product "${sku}" not found`);
        if (entry.value.stock < qty) {
          throw new ConflictException(
            `Not enough stock for "${sku}": ${entry.value.stock} left, ${qty} ordered`,
          );
        }
        op.check(entry).set(entry.key, { ...entry.value, stock: entry.value.stock - qty });
        items.push({ sku, qty, price: entry.value.price });
      }
      const at = now.toISOString();
      const order: Order = {
        id: crypto.randomUUID(),
        customer: request.customer,
        items,
        total: items.reduce((sum, line) => sum + line.qty * line.price, 0),
        status: "pending",
        createdAt: at,
        updatedAt: at,
      };
      op.set(["orders", order.id], order).set(["orders_by_time", at, order.id], order.id);
      if ((await op.commit()).ok) return order;
    }
    throw new ConflictException("The products changed too often while ordering: try again");
  }

  /** One order, or undefined. */
  async getOrder(id: string): Promise<Order | undefined> {
    return (await this.kv.get<Order>(["orders", id])).value ?? undefined;
  }

  /** The most recent orders, newest first. */
  async recentOrders(limit = 20): Promise<Order[]> {
    const ids: string[] = [];
    const index = this.kv.list<string>({ prefix: ["orders_by_time"] }, { reverse: true, limit });
    for await (const e of index) ids.push(e.value);
    if (ids.length === 0) return [];
    const entries = await this.kv.getMany<Order[]>(ids.map((id) => ["orders", id]));
    return entries.flatMap((e) => e.value === null ? [] : [e.value]);
  }

  /**
   * Sets an order's status (and failure reason) unless it already has it.
   *
   * @returns The changed order, or undefined when there was nothing to change.
   */
  async setStatus(
    id: string,
    status: OrderStatus,
    failure?: string,
    now: Date = new Date(),
  ): Promise<Order | undefined> {
    for (let attempt = 0; attempt < 20; attempt++) {
      const entry = await this.kv.get<Order>(["orders", id]);
      if (entry.value === null || entry.value.status === status) return undefined;
      const { failure: _old, ...rest } = entry.value;
      const order: Order = {
        ...rest,
        status,
        updatedAt: now.toISOString(),
        ...(failure !== undefined ? { failure } : {}),
      };
      if ((await this.kv.atomic().check(entry).set(entry.key, order).commit()).ok) return order;
    }
    throw new ConflictException(`Order "${id}" changed too often: try again`);
  }

  /** Closes the database. */
  close(): void {
    this.kv.close();
  }
}
