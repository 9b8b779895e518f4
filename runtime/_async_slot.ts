/**
 * The slot the async context lives in: one value that follows the code through every `await`,
 * timer and callback. `AsyncLocalStorage` provides it everywhere; on Deno a cheaper slot is used
 * when the runtime's own async-context hooks are reachable and pass a check at start-up.
 *
 * Why: Deno's `AsyncLocalStorage.run()` keeps each frame's value in a `WeakMap` keyed by a fresh
 * object. Frames made at a high rate (one per event handler invocation) fill that map with
 * ephemerons, and young-generation collections then cost several times more and promote garbage
 * (measured on the memory broker: about half of the CPU time per message). The slot below stores
 * the value in the frame itself, under the key `fw.context`, in the same frame object
 * `AsyncLocalStorage` uses, so frames of other `AsyncLocalStorage` instances (and of the runtime)
 * stay visible inside ours and ours inside theirs.
 *
 * The check at start-up runs both kinds of frame inside each other and reads both back; when the
 * hooks are missing or behave otherwise, `AsyncLocalStorage` is used as before. The check uses
 * the runtime's `AsyncVariable`, the class Deno's `AsyncLocalStorage` is a thin wrapper of (its
 * `run()` is `enter()` and a restore of the previous frame), so `node:async_hooks`, whose
 * Node.js compatibility modules cost about 15 ms of a cold start, is loaded only on the fallback
 * path (`_async_slot_storage.ts`). The tests also run the check against `AsyncLocalStorage`
 * itself.
 *
 * @module
 */

/** Holds one value per async frame. */
export interface AsyncSlot<T> {
  /**
   * Runs `fn(a, b)` with `value` in a new frame (inheriting the other keys of the current one).
   * Two fixed arguments rather than a rest parameter: a rest array passed on to another call
   * escapes, and costs an allocation per frame (one frame per event handler call).
   */
  run<R, A = undefined, B = undefined>(value: T, fn: (a: A, b: B) => R, a?: A, b?: B): R;
  /** The value of the current frame, or `undefined`. */
  get(): T | undefined;
  /** Which implementation is in use (`frame` or `AsyncLocalStorage`). */
  readonly kind: "frame" | "AsyncLocalStorage";
}

type Frame = Record<string, unknown> | undefined;

interface Hooks {
  getAsyncContext(): Frame;
  setAsyncContext(frame: Frame): void;
  /** The runtime's async variable (what `AsyncLocalStorage` is built on). */
  AsyncVariable: new () => RuntimeVariable;
}

/** The runtime's `AsyncVariable`: `enter()` opens a frame and returns the previous one. */
interface RuntimeVariable {
  enter(value: unknown): Frame;
  get(): unknown;
}

/** The frame key of the value (a string: Deno counts a frame's string keys to see it is in use). */
const KEY = "fw.context";

/**
 * A frame that holds only our key (made by our `run()` outside any other frame). Frames of other
 * `AsyncLocalStorage` instances copy its own key when they spread it.
 */
class OwnFrame {
  "fw.context": unknown;
  constructor(value: unknown) {
    this["fw.context"] = value;
  }
}

function frameSlot<T>(hooks: Hooks): AsyncSlot<T> {
  const get = hooks.getAsyncContext;
  const set = hooks.setAsyncContext;
  return {
    kind: "frame",
    run<R, A = undefined, B = undefined>(value: T, fn: (a: A, b: B) => R, a?: A, b?: B): R {
      const previous = get();
      // A plain object literal (a fast one; a null prototype would make a dictionary): the
      // runtime reads frames by own numeric keys only, which the prototype does not hold.
      // Outside any frame, or in one of ours (a handler started from the settle of the one
      // before), the new frame holds only the key: a small class instance costs a fraction of
      // the spread with a computed key (measured 20-40 ns against 55-140 ns).
      set(
        previous === undefined || previous instanceof OwnFrame
          ? new OwnFrame(value) as unknown as Frame
          : { ...previous, [KEY]: value },
      );
      try {
        return fn(a as A, b as B);
      } finally {
        set(previous);
      }
    },
    get: () => get()?.[KEY] as T | undefined,
  };
}

/** Deno's async-context hooks, when reachable. */
function denoHooks(): Hooks | undefined {
  const deno = (globalThis as { Deno?: Record<PropertyKey, unknown> }).Deno;
  const internal = deno?.internal;
  if (typeof internal !== "symbol") return undefined;
  const core = (deno![internal] as { core?: Partial<Hooks> } | undefined)?.core;
  const get = core?.getAsyncContext, set = core?.setAsyncContext;
  const variable = core?.AsyncVariable;
  if (typeof get !== "function" || typeof set !== "function" || typeof variable !== "function") {
    return undefined;
  }
  return { getAsyncContext: get, setAsyncContext: set, AsyncVariable: variable };
}

/** A frame of the runtime's `AsyncVariable`, opened and closed as `AsyncLocalStorage.run()` does. */
function runVariable<R>(hooks: Hooks, variable: RuntimeVariable, value: unknown, fn: () => R): R {
  const previous = variable.enter(value);
  try {
    return fn();
  } finally {
    hooks.setAsyncContext(previous);
  }
}

/** Runs frames of both kinds inside each other and checks every value reads back. */
function compatible(hooks: Hooks): boolean {
  const other = new hooks.AsyncVariable();
  const slot = frameSlot<number>(hooks);
  const outside = hooks.getAsyncContext();
  const ok = runVariable(hooks, other, 1, () => {
    const frame = hooks.getAsyncContext();
    if (frame === null || typeof frame !== "object") return false;
    return slot.run(2, () =>
      other.get() === 1 && slot.get() === 2 &&
      runVariable(hooks, other, 3, () => other.get() === 3 && slot.get() === 2) &&
      other.get() === 1 && slot.get() === 2);
  });
  return ok && slot.get() === undefined && other.get() === undefined &&
    hooks.getAsyncContext() === outside;
}

/**
 * The frame slot, when Deno's hooks are reachable and pass the check.
 *
 * @returns A new slot, or `undefined` (then use `storageSlot()` from `_async_slot_storage.ts`).
 */
export function frameSlotIfAvailable<T>(): AsyncSlot<T> | undefined {
  try {
    const hooks = denoHooks();
    if (hooks && compatible(hooks)) return frameSlot<T>(hooks);
  } catch {
    // fall through: the caller uses AsyncLocalStorage
  }
  return undefined;
}
