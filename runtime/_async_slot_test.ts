import assert from "node:assert/strict";
import { AsyncLocalStorage } from "node:async_hooks";
import { type AsyncSlot, frameSlotIfAvailable } from "./_async_slot.ts";
import { storageSlot } from "./_async_slot_storage.ts";

function createAsyncSlot<T>(frames: boolean): AsyncSlot<T> {
  return frames ? frameSlotIfAvailable<T>()! : storageSlot<T>();
}

Deno.test("the frame slot is available on Deno", () => {
  assert.equal(frameSlotIfAvailable()?.kind, "frame");
});

for (const [kind, frames] of [["frame", true], ["AsyncLocalStorage", false]] as const) {
  Deno.test(`${kind}: AsyncSlot.run() values follow await, timers and promise callbacks`, async () => {
    const slot = createAsyncSlot<string>(frames);
    const seen: Array<string | undefined> = [];
    await slot.run("a", async () => {
      await Promise.resolve();
      seen.push(slot.get());
      await new Promise((r) => setTimeout(r, 0));
      seen.push(slot.get());
      await Promise.resolve().then(() => seen.push(slot.get()));
      queueMicrotask(() => seen.push(slot.get()));
      await new Promise((r) => setTimeout(r, 0));
    });
    assert.deepEqual(seen, ["a", "a", "a", "a"]);
    assert.equal(slot.get(), undefined);
  });

  Deno.test(`${kind}: AsyncSlot.run() keeps concurrent frames apart`, async () => {
    const slot = createAsyncSlot<number>(frames);
    const seen = await Promise.all(
      [1, 2, 3].map((n) =>
        slot.run(n, async () => {
          await new Promise((r) => setTimeout(r, 3 - n));
          return slot.get();
        })
      ),
    );
    assert.deepEqual(seen, [1, 2, 3]);
  });

  Deno.test(`${kind}: AsyncSlot frames and AsyncLocalStorage frames see each other's values`, async () => {
    const slot = createAsyncSlot<string>(frames);
    const other = new AsyncLocalStorage<string>();
    const seen = await other.run("outer", () =>
      slot.run("slot", async () => {
        await Promise.resolve();
        const inside = await other.run("inner", async () => {
          await Promise.resolve();
          return [other.getStore(), slot.get()];
        });
        return [...inside, other.getStore(), slot.get()];
      }));
    assert.deepEqual(seen, ["inner", "slot", "outer", "slot"]);
    assert.equal(other.getStore(), undefined);
  });

  Deno.test(`${kind}: AsyncSlot.run() passes arguments and restores the frame after a throw`, () => {
    const slot = createAsyncSlot<string>(frames);
    assert.equal(slot.run("x", (a: number, b: number) => `${slot.get()}${a + b}`, 1, 2), "x3");
    assert.throws(() =>
      slot.run("y", () => {
        throw new Error("boom");
      }), /boom/);
    assert.equal(slot.get(), undefined);
  });
}
