/**
 * The async context: values that follow a request or an event invocation through every `await`,
 * timer and callback, without being passed around. Built on `AsyncLocalStorage` (on Deno, on the
 * same async frames without its per-frame `WeakMap` entry: see `_async_slot.ts`).
 *
 * By convention HTTP requests carry `traceId` (and `user` when `oauth()` verified a token); event
 * invocations carry the fields of `EventContext`.
 *
 * @module
 */

import { frameSlotIfAvailable } from "./_async_slot.ts";

/** The verified identity `oauth()` puts in the context as `user`. */
export interface AuthUser {
  /** Subject (`sub` claim). */
  sub?: string;
  /** Email address (`email` claim). */
  email?: string;
  /** Authorised party (`azp` claim). */
  azp?: string;
  /** OAuth client id (`client_id` claim). */
  client_id?: string;
  /** Scopes from `scope` (space separated) or `scp`. */
  scopes: string[];
  /** Roles from the `roles` claim. */
  roles: string[];
  /** Every claim of the token. */
  claims: Record<string, unknown>;
}

// The frame slot on Deno; elsewhere (or if Deno's hooks change) AsyncLocalStorage, loaded only then.
const storage = frameSlotIfAvailable<Record<string, unknown>>() ??
  (await import("./_async_slot_storage.ts")).storageSlot<Record<string, unknown>>();
/**
 * The values of the innermost scope while a `runInSyncContext()` scope runs (undefined inside an
 * async scope opened within it). The innermost scope wins: an async frame the runtime resumed
 * from elsewhere (Deno can leave one behind after loading a module on first use) never hides a
 * synchronous scope opened inside it.
 */
let syncStore: Record<string, unknown> | undefined;

/** Runs `fn` in the async scope `values`, with no synchronous scope inside it. */
function runAsync<R>(values: Record<string, unknown>, fn: () => R): R {
  const previous = syncStore;
  if (previous === undefined) return storage.run(values, fn);
  syncStore = undefined;
  try {
    return storage.run(values, fn);
  } finally {
    syncStore = previous;
  }
}

/**
 * Runs a function that completes synchronously with `values` as the context, without the cost of
 * an async-context frame. Used by the HTTP dispatcher for handlers that are plain (non-async)
 * functions; anything the function schedules for later (a promise callback, a timer) does not
 * see these values, so use {@linkcode runInContext} for asynchronous work.
 *
 * @param values The values of this scope.
 * @param fn A synchronous function.
 * @returns What `fn` returns.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { runInSyncContext, tryContext, useContext } from "@fw/runtime";
 * assert.equal(runInSyncContext({ traceId: "t" }, () => useContext<{ traceId: string }>().traceId), "t");
 * assert.equal(tryContext(), undefined);
 * ```
 */
export function runInSyncContext<R>(values: Record<string, unknown>, fn: () => R): R {
  const previous = syncStore;
  syncStore = values;
  try {
    return fn();
  } finally {
    syncStore = previous;
  }
}

/**
 * Runs `fn` with `values` in the async context. Inside a scope, a nested `runInContext` sees the
 * outer values and overrides only its own keys; the outer scope is never changed. Read the values
 * by property (`useContext().traceId`): some are computed on first use and are not copied by a
 * spread.
 *
 * @param values The values of this scope.
 * @param fn The function to run.
 * @returns What `fn` returns.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { runInContext, useContext } from "@fw/runtime";
 * await runInContext({ traceId: "t1", tenant: "a" }, async () => {
 *   await runInContext({ tenant: "b" }, async () => {
 *     await Promise.resolve();
 *     assert.deepEqual(useContext(), { traceId: "t1", tenant: "b" });
 *   });
 *   assert.equal(useContext<{ tenant: string }>().tenant, "a");
 * });
 * ```
 */
export function runInContext<R>(values: Record<string, unknown>, fn: () => R): R {
  const parent = syncStore ?? storage.get();
  if (parent === undefined) return runAsync(values, fn);
  // Keep the prototype that holds computed values (a request's lazy trace id is a getter): the
  // new values' own class when they have one, else the parent's, so those values stay visible
  // in nested scopes whichever side computes them.
  const own = Object.getPrototypeOf(values);
  const proto = own !== Object.prototype && own !== null ? own : Object.getPrototypeOf(parent);
  const merged = Object.assign(Object.create(proto), parent, values);
  return runAsync(merged, fn);
}

/**
 * Runs `fn` in the scope `values` captured earlier with `tryContext()`: as an async scope, which
 * follows `fn` through every `await`, when `async` is true, else as a synchronous one. Use it to
 * re-enter a scope after work done outside it, or to give code that may await the synchronous
 * scope it was called in (`runInSyncContext()` scopes end at the first `await`). With `values`
 * undefined (there was no scope) or already the current async scope, runs `fn` as it is.
 *
 * The framework opens a synchronous scope per request, which costs nothing, and an async one
 * only around code that may await, such as an `async` handler: an async scope costs the runtime
 * work on every promise created inside it.
 *
 * @param values The captured scope, or `undefined`.
 * @param async True when `fn` may await and the scope must follow it.
 * @param fn The function to run.
 * @returns What `fn` returns.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { resumeContext, runInSyncContext, tryContext } from "@fw/runtime";
 *
 * const captured = runInSyncContext({ traceId: "t" }, () => tryContext());
 * await Promise.resolve(); // work done outside the scope
 * const seen = await resumeContext(captured, true, async () => {
 *   await Promise.resolve();
 *   return tryContext<{ traceId: string }>()?.traceId;
 * });
 * assert.equal(seen, "t");
 * ```
 */
export function resumeContext<R>(
  values: Record<string, unknown> | undefined,
  async: boolean,
  fn: () => R,
): R {
  if (values === undefined) return fn();
  const current = storage.get();
  if (current === values && syncStore === undefined) return fn();
  if (async || current !== undefined) return runAsync(values, fn);
  return runInSyncContext(values, fn);
}

/**
 * Runs `fn` in a new, isolated scope holding only `values`: nothing of the caller's scope is
 * visible. Event handlers run this way, so a handler invoked from inside an HTTP request never
 * sees that request's `user` or trace id.
 *
 * @param values The values of the new scope.
 * @param fn The function to run.
 * @param args Arguments for `fn` (saves a closure on hot paths).
 * @returns What `fn` returns.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { runInContext, runInNewContext, useContext } from "@fw/runtime";
 * runInContext({ user: "ann" }, () => {
 *   runInNewContext({ eventTopic: "a.b" }, () => assert.deepEqual(useContext(), { eventTopic: "a.b" }));
 * });
 * ```
 */
export function runInNewContext<R, A extends unknown[] = []>(
  values: Record<string, unknown>,
  fn: (...args: A) => R,
  ...args: A
): R {
  // Up to two arguments go to the slot one by one: `args` handed on to another call would escape
  // and be allocated per call (this runs once per event handler call); read by index, the
  // optimizing compiler drops it. `fn` gets exactly the arguments given.
  const previous = syncStore;
  syncStore = undefined;
  const call = fn as (...args: unknown[]) => R;
  try {
    const n = args.length;
    if (n === 1) return storage.run(values, callWith1, call, args[0]);
    if (n === 0) return storage.run(values, callWith0, call);
    if (n === 2) return storage.run(values, call, args[0], args[1]);
    return storage.run(values, callWithAll, call, args as unknown[]);
  } finally {
    syncStore = previous;
  }
}

/** Calls `fn` with no argument (for `runInNewContext()`). */
function callWith0<R>(fn: () => R): R {
  return fn();
}

/** Calls `fn` with one argument (for `runInNewContext()`). */
function callWith1<R>(fn: (a: unknown) => R, a: unknown): R {
  return fn(a);
}

/** Calls `fn` with `args` spread (for `runInNewContext()` with three or more). */
function callWithAll<R>(fn: (...args: unknown[]) => R, args: unknown[]): R {
  return fn(...args);
}

/**
 * The values of the current scope.
 *
 * @returns The context object (treat it as read-only).
 * @throws {Error} When called outside `runInContext()`.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { runInContext, useContext } from "@fw/runtime";
 * runInContext({ traceId: "abc" }, () => assert.equal(useContext<{ traceId: string }>().traceId, "abc"));
 * assert.throws(() => useContext(), /outside runInContext/);
 * ```
 */
export function useContext<T extends object = Record<string, unknown>>(): T {
  const store = syncStore ?? storage.get();
  if (!store) {
    throw new Error("useContext() called outside runInContext(): no async context is active");
  }
  return store as T;
}

/**
 * The values of the current scope, or `undefined` outside any.
 *
 * @returns The context object or `undefined`.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { tryContext } from "@fw/runtime";
 * assert.equal(tryContext(), undefined);
 * ```
 */
export function tryContext<T extends object = Record<string, unknown>>(): T | undefined {
  return (syncStore ?? storage.get()) as T | undefined;
}
