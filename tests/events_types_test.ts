/**
 * Type tests for topics, handlers and publishers: payload and dependency types are inferred from
 * the schemas and providers. `deno check` fails if any `@ts-expect-error` line stops being an
 * error, or if a correct line stops compiling.
 */

import assert from "node:assert/strict";
import {
  ArrayOf,
  getPublisher,
  handler,
  Int,
  type Message,
  Optional,
  type PayloadOf,
  topic,
  Uuid,
} from "@fw/events";
import { provider } from "@fw/runtime";

type Equal<A, B> = (<T>() => T extends A ? 1 : 2) extends (<T>() => T extends B ? 1 : 2) ? true
  : false;
function expectType<T extends true>(_: T): void {}

const Shipped = topic("orders.shipped", {
  id: Uuid,
  parcels: ArrayOf(Int),
  note: Optional(String),
});
type Shipped = PayloadOf<typeof Shipped>;
expectType<Equal<Shipped, { id: string; parcels: number[]; note?: string }>>(true);

const Mailer = provider({ name: "Mailer", factory: () => ({ send: (_to: string) => true }) });

Deno.test("handler() infers the payload type and the injected dependencies", () => {
  const plain = handler(Shipped).handle((msg) => {
    expectType<Equal<typeof msg, Message<Shipped>>>(true);
    const first: number | undefined = msg.payload.parcels[0];
    // @ts-expect-error: `id` is a string
    const wrong: number = msg.payload.id;
    void first, wrong;
  });
  const injected = handler(Shipped).inject({ mailer: Mailer }).handle((deps, msg) => {
    const sent: boolean = deps.mailer.send(msg.payload.id);
    // @ts-expect-error: no such dependency
    void deps.db;
    void sent;
  });
  // @ts-expect-error: with .inject() the function takes (deps, msg): msg is second
  handler(Shipped).inject({ mailer: Mailer }).handle((msg: Message<Shipped>) => msg.payload.id);
  assert.equal(plain.topic, Shipped);
  assert.ok(injected.inject);
});

Deno.test("getPublisher() accepts only payloads of the topic's schema", () => {
  const publish = getPublisher(Shipped);
  const ok = () => publish({ id: crypto.randomUUID(), parcels: [1, 2] });
  // @ts-expect-error: parcels must be numbers
  const bad = () => publish({ id: "x", parcels: ["a"] });
  // @ts-expect-error: id is required
  const missing = () => publish({ parcels: [] });
  // @ts-expect-error: attributes are strings
  const attrs = () => publish({ id: "x", parcels: [] }, { attributes: { n: 1 } });
  assert.equal(typeof ok, "function");
  void bad, missing, attrs;
});
