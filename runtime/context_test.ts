import assert from "node:assert/strict";
import {
  resumeContext,
  runInContext,
  runInNewContext,
  runInSyncContext,
  tryContext,
  useContext,
} from "./context.ts";

Deno.test("useContext() sees the values across await and timers", async () => {
  await runInContext({ traceId: "t-1" }, async () => {
    await new Promise((r) => setTimeout(r, 1));
    await Promise.resolve();
    assert.equal(useContext<{ traceId: string }>().traceId, "t-1");
  });
});

Deno.test("runInContext() nested scopes inherit and override without changing the parent", async () => {
  await runInContext({ traceId: "outer", user: "ada" }, async () => {
    await runInContext({ traceId: "inner" }, async () => {
      await Promise.resolve();
      assert.deepEqual(useContext(), { traceId: "inner", user: "ada" });
    });
    assert.deepEqual(useContext(), { traceId: "outer", user: "ada" });
  });
});

Deno.test("runInContext() keeps concurrent scopes isolated", async () => {
  const seen = await Promise.all(
    ["a", "b", "c"].map((id, i) =>
      runInContext({ id }, async () => {
        await new Promise((r) => setTimeout(r, 3 - i));
        return useContext<{ id: string }>().id;
      })
    ),
  );
  assert.deepEqual(seen, ["a", "b", "c"]);
});

Deno.test("useContext() throws and tryContext() returns undefined outside a scope", () => {
  assert.equal(tryContext(), undefined);
  assert.throws(() => useContext(), /useContext\(\) called outside runInContext\(\)/);
  assert.equal(runInContext({ x: 1 }, () => tryContext<{ x: number }>()?.x), 1);
});

Deno.test("runInContext() returns the function's result, sync or async", async () => {
  assert.equal(runInContext({}, () => 5), 5);
  assert.equal(await runInContext({}, () => Promise.resolve(6)), 6);
});

Deno.test("runInContext() nested scopes keep values computed by prototype getters", async () => {
  class Lazy {
    calls = 0;
    get traceId(): string {
      this.calls++;
      return "lazy-trace";
    }
  }
  await runInContext(new Lazy() as unknown as Record<string, unknown>, async () => {
    await runInContext({ eventTopic: "t" }, async () => {
      await Promise.resolve();
      const ctx = useContext<{ traceId: string; eventTopic: string }>();
      assert.equal(ctx.traceId, "lazy-trace");
      assert.equal(ctx.eventTopic, "t");
    });
  });
});

Deno.test("A timer callback sees the scope that scheduled it, not the one active when it fires", async () => {
  const seen: string[] = [];
  let fired!: () => void;
  const done = new Promise<void>((r) => fired = r);
  runInContext({ id: "scheduler" }, () => {
    setTimeout(() => {
      seen.push(useContext<{ id: string }>().id);
      fired();
    }, 1);
  });
  await runInContext({ id: "other" }, async () => {
    await done;
    seen.push(useContext<{ id: string }>().id);
  });
  assert.deepEqual(seen, ["scheduler", "other"]);
  assert.equal(tryContext(), undefined);
});

Deno.test("runInContext() concurrent children of one parent stay isolated", async () => {
  await runInContext({ traceId: "req-1", user: "ada" }, async () => {
    const seen = await Promise.all(
      ["a", "b", "c"].map((attempt, i) =>
        runInContext({ attempt }, async () => {
          await new Promise((r) => setTimeout(r, 3 - i));
          const ctx = useContext<{ traceId: string; user: string; attempt: string }>();
          return `${ctx.traceId}/${ctx.user}/${ctx.attempt}`;
        })
      ),
    );
    assert.deepEqual(seen, ["req-1/ada/a", "req-1/ada/b", "req-1/ada/c"]);
    assert.deepEqual(useContext(), { traceId: "req-1", user: "ada" });
  });
});

Deno.test("runInContext() leaves the objects it was given unchanged", async () => {
  const outer = { traceId: "t", tenant: "a" };
  const inner = { tenant: "b" };
  await runInContext(outer, async () => {
    await runInContext(inner, async () => {
      await Promise.resolve();
      assert.deepEqual(useContext(), { traceId: "t", tenant: "b" });
    });
  });
  assert.deepEqual(outer, { traceId: "t", tenant: "a" });
  assert.deepEqual(inner, { tenant: "b" });
});

Deno.test("runInSyncContext() values are inherited by a nested runInContext()", async () => {
  const pending = runInSyncContext(
    { traceId: "sync" },
    () =>
      runInContext({ step: 2 }, async () => {
        await Promise.resolve();
        return useContext<{ traceId: string; step: number }>();
      }),
  );
  assert.equal(tryContext(), undefined);
  assert.deepEqual(await pending, { traceId: "sync", step: 2 });
});

Deno.test("resumeContext() re-enters a captured scope, synchronously or across awaits", async () => {
  const id = () => tryContext<{ id: string }>()?.id;
  /** The scope's id after an await. */
  const idLater = async () => {
    await new Promise((r) => setTimeout(r, 1));
    return id();
  };
  const captured = runInSyncContext({ id: "req" }, () => tryContext());
  assert.equal(resumeContext(captured, false, id), "req");
  assert.equal(tryContext(), undefined);
  assert.equal(await resumeContext(captured, true, idLater), "req");
  // inside another async scope the captured one still wins, even for synchronous code
  assert.equal(
    await runInContext({ id: "other" }, () => resumeContext(captured, false, id)),
    "req",
  );
  assert.equal(resumeContext(undefined, true, () => tryContext()), undefined);
  // a synchronous scope ends at the first await; resumeContext(tryContext(), true) carries it
  assert.equal(await runInSyncContext({ id: "sync" }, idLater), undefined);
  const carry = () => resumeContext(tryContext(), true, idLater);
  assert.equal(await runInSyncContext({ id: "sync" }, carry), "sync");
  // inside an async scope already, the scope is used as it is
  assert.equal(await runInContext({ id: "async" }, carry), "async");
});

Deno.test("runInSyncContext() inside an async scope is the innermost scope until it returns", async () => {
  await runInContext({ id: "outer" }, async () => {
    const id = () => tryContext<{ id: string }>()?.id;
    assert.equal(runInSyncContext({ id: "inner" }, id), "inner");
    assert.equal(
      runInSyncContext({ id: "inner" }, () => runInContext({ extra: 1 }, id)),
      "inner",
      "an async scope opened inside it inherits from it",
    );
    assert.equal(id(), "outer");
    await Promise.resolve();
    assert.equal(id(), "outer");
  });
});

Deno.test("runInNewContext() passes its arguments to fn, however many, in a scope of its values only", async () => {
  const seen: unknown[] = [];
  await runInContext({ user: "ann" }, async () => {
    const join = (...xs: number[]) => `${useContext().eventTopic}:${xs.join(",")}`;
    seen.push(runInNewContext({ eventTopic: "a" }, join));
    seen.push(runInNewContext({ eventTopic: "b" }, join, 1));
    seen.push(runInNewContext({ eventTopic: "c" }, (x: number, y: number) => `${x + y}`, 1, 2));
    seen.push(runInNewContext({ eventTopic: "d" }, join, 1, 2, 3, 4));
    seen.push(
      await runInNewContext({ eventTopic: "e" }, async (x: number) => {
        await new Promise((r) => setTimeout(r, 1));
        return `${Object.keys(useContext()).join()}:${x}`;
      }, 5),
    );
    seen.push(useContext().user);
  });
  assert.deepEqual(seen, ["a:", "b:1", "3", "d:1,2,3,4", "eventTopic:5", "ann"]);
});
