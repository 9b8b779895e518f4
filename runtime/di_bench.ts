/**
 * Cost of the per-request dependency path (`createScope()`, `resolveAll()`, `dispose()`) against
 * handing the same already-built objects over by hand, for the two shapes endpoints use: only
 * singletons (the common case), and singletons plus one scoped value with a disposer.
 *
 * Run: `deno bench runtime/di_bench.ts`
 *
 * @module
 */

import { Container } from "./di.ts";
import { provider } from "./provider.ts";

const Config = provider({ name: "Config", factory: () => ({ url: "postgres://db" }) });
const Db = provider({
  name: "Db",
  inject: { config: Config },
  factory: ({ config }) => ({ url: config.url }),
});
const Mailer = provider({ name: "Mailer", factory: () => ({ send: () => {} }) });
let closed = 0;
const Tx = provider({
  name: "Tx",
  lifetime: "scoped",
  inject: { db: Db },
  factory: ({ db }) => ({ db, open: true }),
  dispose: () => void closed++,
});

const container = new Container();
const db = await container.resolve(Db);
const mailer = await container.resolve(Mailer);
const singletons = { db: Db, mailer: Mailer };
const withScoped = { db: Db, mailer: Mailer, tx: Tx };

Deno.bench("by hand: singletons", { group: "singletons", baseline: true }, async () => {
  const deps = await Promise.resolve({ db, mailer });
  if (deps.db !== db) throw new Error("unreachable");
});

Deno.bench("Scope.resolveAll(): singletons", { group: "singletons" }, async () => {
  const scope = container.createScope();
  const deps = await scope.resolveAll(singletons);
  await scope.dispose();
  if (deps.db !== db) throw new Error("unreachable");
});

Deno.bench("by hand: singletons + scoped", { group: "scoped", baseline: true }, async () => {
  const tx = { db, open: true };
  const deps = await Promise.resolve({ db, mailer, tx });
  await Promise.resolve(void closed++);
  if (deps.tx.db !== db) throw new Error("unreachable");
});

Deno.bench("Scope.resolveAll(): singletons + scoped", { group: "scoped" }, async () => {
  const scope = container.createScope();
  const deps = await scope.resolveAll(withScoped);
  await scope.dispose();
  if (deps.tx.db !== db) throw new Error("unreachable");
});
