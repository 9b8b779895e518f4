import assert from "node:assert/strict";
import { Container } from "./di.ts";
import { type Provider, provider } from "./provider.ts";

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

Deno.test("Scope.resolveAll() resolves sync and async providers and shares one instance per scope", async () => {
  let made = 0;
  const Config = provider({ name: "Config", factory: () => ({ env: "test" }) });
  const Tx = provider({
    name: "Tx",
    lifetime: "scoped",
    inject: { config: Config },
    factory: async ({ config }) => {
      await Promise.resolve();
      return { n: ++made, env: config.env };
    },
  });
  const c = new Container();
  const scope = c.createScope();
  const deps = await scope.resolveAll({ config: Config, a: Tx, b: Tx });
  assert.equal(deps.a, deps.b);
  assert.equal(deps.config, await c.resolve(Config));
  assert.deepEqual(deps.a, { n: 1, env: "test" });
  const again = await scope.resolveAll({ a: Tx });
  assert.equal(again.a, deps.a);
  assert.deepEqual(await scope.resolveAll({}), {});
  await scope.dispose();
});

Deno.test("Scope.resolve() rejects after the scope is disposed", async () => {
  const Tx = provider({ name: "Tx", lifetime: "scoped", factory: () => ({}) });
  const scope = new Container().createScope();
  await scope.resolve(Tx);
  await scope.dispose();
  await assert.rejects(scope.resolve(Tx), /Cannot resolve "Tx": scope is disposed/);
  await assert.rejects(scope.resolveAll({ tx: Tx }), /scope is disposed/);
});

Deno.test("Container.resolve() rejects after the container is disposed", async () => {
  const A = provider({ name: "A", factory: () => 1 });
  const c = new Container();
  await c.dispose();
  await assert.rejects(c.resolve(A), /Container is disposed/);
  await assert.rejects(c.createScope().resolve(A), /Container is disposed/);
});

Deno.test("Scope.dispose() during an async creation disposes the late value and rejects", async () => {
  const log: string[] = [];
  let release!: () => void;
  const gate = new Promise<void>((r) => release = r);
  const Conn = provider({
    name: "Conn",
    lifetime: "scoped",
    factory: async () => {
      await gate;
      return "conn";
    },
    dispose: (v) => void log.push(`closed ${v}`),
  });
  const scope = new Container().createScope();
  const resolving = scope.resolve(Conn);
  await scope.dispose();
  release();
  await assert.rejects(resolving, /Cannot resolve "Conn": its scope was disposed meanwhile/);
  assert.deepEqual(log, ["closed conn"]);
});

Deno.test("Scope.resolveAll() rejects with a sync failure and leaves no unhandled rejection", async () => {
  const Slow = provider({
    name: "Slow",
    lifetime: "scoped",
    factory: () => Promise.reject(new Error("slow failed")),
  });
  const Bad = provider({
    name: "Bad",
    lifetime: "scoped",
    factory: (): number => {
      throw new Error("bad failed");
    },
  });
  const scope = new Container().createScope();
  await assert.rejects(scope.resolveAll({ slow: Slow, bad: Bad }), /bad failed/);
  await assert.rejects(scope.resolve(Slow), /slow failed/);
  await scope.dispose();
});

Deno.test("Container.provide() binds a factory with its own disposer, disposed with the scope", async () => {
  const log: string[] = [];
  const Session = provider<{ id: number }>({ name: "Session", lifetime: "scoped" });
  let n = 0;
  const c = new Container().provide(Session, {
    factory: () => Promise.resolve({ id: ++n }),
    dispose: (s) => void log.push(`end ${s.id}`),
  });
  for (let i = 0; i < 2; i++) {
    await using scope = c.createScope();
    await scope.resolve(Session);
  }
  assert.deepEqual(log, ["end 1", "end 2"]);
});

Deno.test("Container names a cycle between scoped providers", async () => {
  const A: Provider<number> = provider({
    name: "A",
    lifetime: "scoped",
    inject: () => ({ b: B }),
    factory: () => 1,
  });
  const B: Provider<number> = provider({
    name: "B",
    lifetime: "scoped",
    inject: () => ({ c: C }),
    factory: () => 2,
  });
  const C: Provider<number> = provider({
    name: "C",
    lifetime: "scoped",
    inject: { a: A },
    factory: () => 3,
  });
  const scope = new Container().createScope();
  await assert.rejects(scope.resolve(B), /Provider cycle: "B" -> "C" -> "A" -> "B"/);
  await scope.dispose();
});

Deno.test("Disposal order follows creation order when async factories finish out of order", async () => {
  const log: string[] = [];
  const Base = provider({
    name: "Base",
    lifetime: "scoped",
    factory: async () => {
      await new Promise((r) => setTimeout(r, 2));
      return "base";
    },
    dispose: () => void log.push("Base"),
  });
  const Mid = provider({
    name: "Mid",
    lifetime: "scoped",
    inject: { base: Base },
    factory: () => "mid",
    dispose: () => void log.push("Mid"),
  });
  const Top = provider({
    name: "Top",
    lifetime: "scoped",
    inject: { mid: Mid },
    factory: () => "top",
    dispose: () => void log.push("Top"),
  });
  const scope = new Container().createScope();
  await scope.resolveAll({ top: Top, base: Base });
  await scope.dispose();
  assert.deepEqual(log, ["Top", "Mid", "Base"]);
});
