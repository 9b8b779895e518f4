/**
 * The dashboard's script, in the browser: typed calls of the shop's own API through
 * `@fw/application/client`, with the route map `deno task generate` writes (`ApiRoutes`). The feed
 * is `GET /orders/live` read as a typed Server-Sent Events stream, the products come from
 * `GET /products` and the form places orders with `POST /orders`, each result narrowed by status.
 * `deno task generate` bundles this file for browsers into `.gen/dashboard.js`, which the app
 * serves at `/dashboard.js`.
 *
 * @module
 */

import { apiClient, ApiStreamError } from "@fw/application/client";
import type { ApiRoutes } from "./.gen/api.gen.ts";

/**
 * The few DOM members the page uses. (A `lib="dom"` reference would change the types of the whole
 * repository's `deno check`, so the page declares what it touches.)
 */
interface El {
  textContent: string | null;
  title: string;
  className: string;
  value: string;
  dataset: Record<string, string | undefined>;
  readonly children: ArrayLike<El>;
  append(...nodes: El[]): void;
  prepend(...nodes: El[]): void;
  replaceChildren(...nodes: El[]): void;
  addEventListener(type: "submit", listener: (e: { preventDefault(): void }) => void): void;
}
const document = (globalThis as unknown as {
  document: {
    getElementById(id: string): El;
    querySelector(selector: string): El | null;
    createElement(tag: string): El;
  };
}).document;

type Summary = { id: string; status: string; items: number; total: number; updatedAt: string };

const client = apiClient<ApiRoutes>(location.origin);
/** What the page exposes to its tests: updates seen and error events received. */
const shop = { updates: 0, errors: [] as unknown[] };
Object.assign(globalThis, { shop });

const $ = (id: string) => document.getElementById(id);
const money = (cents: number) => (cents / 100).toFixed(2);

function show(order: Summary): void {
  let row = document.querySelector(`tr[data-id="${order.id}"]`);
  if (!row) {
    row = document.createElement("tr");
    row.dataset.id = order.id;
    for (let i = 0; i < 5; i++) row.append(document.createElement("td"));
    $("orders").prepend(row);
  }
  const [id, status, items, total, updated] = Array.from(row.children);
  id.textContent = order.id.slice(0, 8);
  id.title = order.id;
  const badge = document.createElement("span");
  badge.className = `status ${order.status}`;
  badge.textContent = order.status;
  status.replaceChildren(badge);
  row.dataset.status = order.status;
  items.textContent = String(order.items);
  items.className = "num";
  total.textContent = money(order.total);
  total.className = "num";
  updated.textContent = new Date(order.updatedAt).toLocaleTimeString();
}

function connection(state: "live" | "reconnecting"): void {
  $("connection").textContent = state;
  $("connection").className = state === "live" ? "live" : "";
}

/** Follows the live feed; after an error or a lost connection, opens it again a second later. */
async function follow(): Promise<void> {
  while (true) {
    try {
      for await (
        const order of client.stream("GET /orders/live", { onOpen: () => connection("live") })
      ) {
        shop.updates++;
        show(order);
      }
    } catch (error) {
      if (error instanceof ApiStreamError && error.body !== undefined) shop.errors.push(error.body);
    }
    connection("reconnecting");
    await new Promise((resolve) => setTimeout(resolve, 1000));
  }
}

async function products(): Promise<void> {
  const res = await client.get("/products");
  if (res.status !== 200) {
    $("message").textContent = `${res.status}: ${res.error.message}`;
    return;
  }
  for (const p of res.data) {
    const option = document.createElement("option");
    option.value = p.sku;
    option.textContent = `${p.name} (${money(p.price)}, ${p.stock} left)`;
    $("sku").append(option);
  }
}

$("order-form").addEventListener("submit", async (e) => {
  e.preventDefault();
  const res = await client.post("/orders", {
    body: {
      customer: $("customer").value,
      items: [{
        sku: $("sku").value,
        qty: Number($("qty").value),
      }],
      paymentToken: $("token").value,
    },
  });
  $("message").textContent = res.status === 201
    ? `Order ${res.data.id.slice(0, 8)} placed`
    : `${res.status}: ${res.error.message}`;
});

follow();
await products();
