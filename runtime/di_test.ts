import assert from "node:assert/strict";
import { Container, type Provider, provider } from "./di.ts";

Deno.test("Container.resolve() creates a singleton once, even for concurrent callers", async () => {
  let made = 0;
  const Db = provider({
    name: "Db",
    factory: async () => {
      await new Promise((r) => setTimeout(r, 1));
      return { n: ++made };
    },
  });
  const c = new Container();
  const [a, b] = await Promise.all([c.resolve(Db), c.resolve(Db)]);
  assert.equal(a, b);
  assert.equal(made, 1);
});

Deno.test("Scope.resolve() creates scoped values once per scope and shares singletons", async () => {
  const Config = provider({ name: "Config", factory: () => ({ env: "test" }) });
  let n = 0;
  const Tx = provider({
    name: "Tx",
    lifetime: "scoped",
    inject: { config: Config },
    factory: ({ config }) => ({ id: ++n, env: config.env }),
  });
  const c = new Container();
  const s1 = c.createScope();
  const s2 = c.createScope();
  const a1 = await s1.resolve(Tx);
  assert.equal(await s1.resolve(Tx), a1);
  const b1 = await s2.resolve(Tx);
  assert.notEqual(a1, b1);
  assert.deepEqual([a1.id, b1.id, a1.env], [1, 2, "test"]);
  assert.equal(await s1.resolve(Config), await s2.resolve(Config));
  await s1.dispose();
  await s2.dispose();
});

Deno.test("Scope.dispose() and Container.dispose() run disposers in reverse creation order", async () => {
  const log: string[] = [];
  const A = provider({ name: "A", factory: () => "a", dispose: () => void log.push("A") });
  const B = provider({
    name: "B",
    inject: { a: A },
    factory: () => "b",
    dispose: () => void log.push("B"),
  });
  const S1 = provider({
    name: "S1",
    lifetime: "scoped",
    inject: { b: B },
    factory: () => "s1",
    dispose: () => void log.push("S1"),
  });
  const S2 = provider({
    name: "S2",
    lifetime: "scoped",
    inject: { s1: S1 },
    factory: () => Promise.resolve("s2"),
    dispose: () => Promise.resolve(void log.push("S2")),
  });
  const c = new Container();
  const scope = c.createScope();
  assert.deepEqual(await scope.resolveAll({ x: S2 }), { x: "s2" });
  await scope.dispose();
  assert.deepEqual(log, ["S2", "S1"]);
  await c.dispose();
  assert.deepEqual(log, ["S2", "S1", "B", "A"]);
});

Deno.test("Scope supports `await using`", async () => {
  const log: string[] = [];
  const R = provider({
    name: "R",
    lifetime: "scoped",
    factory: () => 1,
    dispose: () => void log.push("closed"),
  });
  {
    await using scope = new Container().createScope();
    await scope.resolve(R);
  }
  assert.deepEqual(log, ["closed"]);
});

Deno.test("Container names a missing binding for an abstract provider", async () => {
  const Mailer = provider<{ send(): void }>({ name: "Mailer" });
  const c = new Container();
  await assert.rejects(c.resolve(Mailer), /No provider bound for "Mailer"/);
  c.provide(Mailer, { value: { send() {} } });
  assert.equal(typeof (await c.resolve(Mailer)).send, "function");
});

Deno.test("Container names the cycle path", async () => {
  const A: Provider<number> = provider({ name: "A", inject: () => ({ b: B }), factory: () => 1 });
  const B: Provider<number> = provider({ name: "B", inject: { a: A }, factory: () => 2 });
  await assert.rejects(new Container().resolve(A), /Provider cycle: "A" -> "B" -> "A"/);
});

Deno.test("Container rejects a singleton that depends on a scoped provider", async () => {
  const Req = provider({ name: "Req", lifetime: "scoped", factory: () => 1 });
  const Svc = provider({ name: "Svc", inject: { req: Req }, factory: () => 2 });
  const c = new Container();
  await assert.rejects(
    c.createScope().resolve(Svc),
    /Singleton provider "Svc" cannot depend on scoped provider "Req"/,
  );
  await assert.rejects(c.resolve(Req), /Scoped provider "Req" can only be resolved inside a scope/);
});

Deno.test("Container.override() replaces a provider for tests, including scoped ones", async () => {
  const Clock = provider({ name: "Clock", lifetime: "scoped", factory: () => ({ now: 1 }) });
  const c = new Container().override(Clock, { factory: () => ({ now: 99 }) });
  assert.equal((await c.createScope().resolve(Clock)).now, 99);
  const used = new Container();
  const Single = provider({ name: "Single", factory: () => 1 });
  await used.resolve(Single);
  assert.throws(() => used.override(Single, { value: 2 }), /already created/);
});

Deno.test("A failing factory is retried on the next resolve and disposers all run", async () => {
  let fail = true;
  const Flaky = provider({
    name: "Flaky",
    factory: () => {
      if (fail) throw new Error("not yet");
      return "ok";
    },
  });
  const c = new Container();
  await assert.rejects(c.resolve(Flaky), /not yet/);
  fail = false;
  assert.equal(await c.resolve(Flaky), "ok");

  const log: string[] = [];
  const X = provider({ name: "X", factory: () => 1, dispose: () => void log.push("X") });
  const Y = provider({
    name: "Y",
    factory: () => 2,
    dispose: () => {
      throw new Error("boom");
    },
  });
  const d = new Container();
  await d.resolve(X);
  await d.resolve(Y);
  await assert.rejects(d.dispose(), AggregateError);
  assert.deepEqual(log, ["X"]);
});

Deno.test("provider() validates its options", () => {
  assert.throws(() => provider({ name: "" }), /non-empty "name"/);
  // @ts-expect-error: wrong lifetime on purpose
  assert.throws(() => provider({ name: "P", lifetime: "request" }), /"lifetime" must be/);
  // @ts-expect-error: not a provider on purpose
  assert.throws(() => provider({ name: "P", inject: { x: 1 } }), /inject\.x is not a provider/);
});
