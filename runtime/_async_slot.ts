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
 * hooks are missing or behave otherwise, `AsyncLocalStorage` is used as before.
 *
 * @module
 */

import { AsyncLocalStorage } from "node:async_hooks";

/** Holds one value per async frame. */
export interface AsyncSlot<T> {
  /** Runs `fn(...args)` with `value` in a new frame (inheriting the other keys of the current one). */
  run<R, A extends unknown[]>(value: T, fn: (...args: A) => R, ...args: A): R;
  /** The value of the current frame, or `undefined`. */
  get(): T | undefined;
  /** Which implementation is in use (`frame` or `AsyncLocalStorage`). */
  readonly kind: "frame" | "AsyncLocalStorage";
}

type Frame = Record<string, unknown> | undefined;

interface Hooks {
  getAsyncContext(): Frame;
  setAsyncContext(frame: Frame): void;
}

/** The frame key of the value (a string: Deno counts a frame's string keys to see it is in use). */
const KEY = "fw.context";

function storageSlot<T>(): AsyncSlot<T> {
  const storage = new AsyncLocalStorage<T>();
  return {
    kind: "AsyncLocalStorage",
    run: (value, fn, ...args) => storage.run(value, fn, ...args),
    get: () => storage.getStore(),
  };
}

function frameSlot<T>(hooks: Hooks): AsyncSlot<T> {
  const get = hooks.getAsyncContext;
  const set = hooks.setAsyncContext;
  return {
    kind: "frame",
    run<R, A extends unknown[]>(value: T, fn: (...args: A) => R, ...args: A): R {
      const previous = get();
      // A plain object literal (a fast one; a null prototype would make a dictionary): the
      // runtime reads frames by own numeric keys only, which the prototype does not hold.
      set({ ...previous, [KEY]: value });
      try {
        return fn(...args);
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
  if (typeof get !== "function" || typeof set !== "function") return undefined;
  return { getAsyncContext: get, setAsyncContext: set };
}

/** Runs frames of both kinds inside each other and checks every value reads back. */
function compatible(hooks: Hooks): boolean {
  const other = new AsyncLocalStorage<number>();
  const slot = frameSlot<number>(hooks);
  const outside = hooks.getAsyncContext();
  const ok = other.run(1, () => {
    const frame = hooks.getAsyncContext();
    if (frame === null || typeof frame !== "object") return false;
    return slot.run(2, () =>
      other.getStore() === 1 && slot.get() === 2 &&
      other.run(3, () => other.getStore() === 3 && slot.get() === 2) &&
      other.getStore() === 1 && slot.get() === 2);
  });
  return ok && slot.get() === undefined && hooks.getAsyncContext() === outside;
}

/**
 * Makes the slot: the frame slot when Deno's hooks are reachable and compatible, else
 * `AsyncLocalStorage`.
 *
 * @param frames False forces `AsyncLocalStorage` (tests run both kinds).
 * @returns A new slot.
 */
export function createAsyncSlot<T>(frames = true): AsyncSlot<T> {
  if (!frames) return storageSlot<T>();
  try {
    const hooks = denoHooks();
    if (hooks && compatible(hooks)) return frameSlot<T>(hooks);
  } catch {
    // fall through: use AsyncLocalStorage
  }
  return storageSlot<T>();
}
