/**
 * Dependency injection: a {@linkcode Container} holds bindings and singletons; a {@linkcode Scope}
 * (one per request or event invocation) holds scoped values and disposes them, in reverse creation
 * order, when it ends. Providers are declared with `provider()` (see `provider.ts`).
 *
 * Values whose dependencies are already made and whose factory returns synchronously are created
 * without a promise, so an endpoint's per-request `resolveAll()` over ready singletons costs a map
 * lookup per key.
 *
 * @module
 */

import type { Provider, ProviderImpl, ProviderMap, Resolved } from "./provider.ts";

type Disposer = (value: never) => void | Promise<void>;
type Path = readonly Provider<unknown>[];

/** Returned by the synchronous path when the asynchronous one must take over. */
const PENDING: unique symbol = Symbol("pending");
const NO_PATH: Path = Object.freeze([]);
const DONE: Promise<void> = Promise.resolve();

/** The values of one lifetime: a container's singletons or one scope's scoped values. */
class Store {
  readonly ready = new Map<Provider<unknown>, unknown>();
  readonly pending = new Map<Provider<unknown>, Promise<unknown>>();
  readonly created: { value: unknown; dispose: Disposer }[] = [];
  disposed = false;

  constructor(readonly what: "container" | "scope") {}

  dispose(): Promise<void> {
    this.disposed = true;
    this.ready.clear();
    this.pending.clear();
    return this.created.length === 0 ? DONE : disposeAll(this.created, this.what);
  }
}

async function disposeAll(created: Store["created"], what: string): Promise<void> {
  const errors: unknown[] = [];
  while (created.length) {
    const { value, dispose } = created.pop()!;
    try {
      await (dispose as (v: unknown) => unknown)(value);
    } catch (err) {
      errors.push(err);
    }
  }
  if (errors.length) throw new AggregateError(errors, `Disposing the ${what} failed`);
}

function isThenable(value: unknown): value is PromiseLike<unknown> {
  return value !== null && (typeof value === "object" || typeof value === "function") &&
    typeof (value as PromiseLike<unknown>).then === "function";
}

function cyclePath(path: Path, p: Provider<unknown>): string {
  return [...path.slice(path.indexOf(p)), p].map((x) => `"${x.name}"`).join(" -> ");
}

/** The resolution logic shared by a container and its scopes. */
class Engine {
  readonly bindings = new Map<Provider<unknown>, ProviderImpl<unknown>>();
  readonly singletons = new Store("container");

  /** Returns the value when it exists or can be made synchronously, else {@linkcode PENDING}. */
  now(p: Provider<unknown>, scope: Store | undefined, path: Path): unknown {
    const store = p.lifetime === "scoped" ? scope : this.singletons;
    if (store === undefined || store.disposed || this.singletons.disposed) return PENDING;
    const ready = store.ready.get(p);
    if (ready !== undefined || store.ready.has(p)) return ready;
    if (store.pending.has(p) || path.includes(p)) return PENDING;
    const impl = this.bindings.get(p);
    let value: unknown;
    if (impl !== undefined) {
      value = "value" in impl ? impl.value : impl.factory();
    } else {
      if (p.factory === undefined) return PENDING; // the async path reports the missing binding
      const inject = p.inject;
      const deps: Record<string, unknown> = {};
      const depScope = store === scope ? scope : undefined;
      const next = [...path, p];
      for (const key in inject) {
        const dep = this.now(inject[key], depScope, next);
        if (dep === PENDING) return PENDING;
        deps[key] = dep;
      }
      value = (p.factory as (deps: Record<string, unknown>) => unknown)(deps);
    }
    const dispose = impl !== undefined ? impl.dispose : p.dispose;
    if (isThenable(value)) {
      this.track(p, store, Promise.resolve(value), dispose);
      return PENDING;
    }
    store.ready.set(p, value);
    if (dispose) store.created.push({ value, dispose });
    return value;
  }

  resolve(p: Provider<unknown>, scope: Store | undefined, path: Path): Promise<unknown> {
    let value: unknown;
    try {
      value = this.now(p, scope, path);
    } catch (err) {
      return Promise.reject(err);
    }
    if (value !== PENDING) return Promise.resolve(value);
    if (path.includes(p)) return Promise.reject(new Error(`Provider cycle: ${cyclePath(path, p)}`));
    if (this.singletons.disposed) return Promise.reject(new Error("Container is disposed"));
    const scoped = p.lifetime === "scoped";
    if (scoped && scope === undefined) {
      const from = path.at(-1);
      return Promise.reject(
        from === undefined
          ? new Error(
            `Scoped provider "${p.name}" can only be resolved inside a scope: use container.createScope()`,
          )
          : new Error(
            `Singleton provider "${from.name}" cannot depend on scoped provider "${p.name}"`,
          ),
      );
    }
    const store = scoped ? scope! : this.singletons;
    if (store.disposed) {
      return Promise.reject(new Error(`Cannot resolve "${p.name}": scope is disposed`));
    }
    const inflight = store.pending.get(p);
    if (inflight !== undefined) return inflight;
    const impl = this.bindings.get(p);
    const dispose = impl !== undefined ? impl.dispose : p.dispose;
    return this.track(p, store, this.create(p, scoped ? scope : undefined, [...path, p]), dispose);
  }

  async create(p: Provider<unknown>, scope: Store | undefined, path: Path): Promise<unknown> {
    const impl = this.bindings.get(p);
    if (impl !== undefined) return "value" in impl ? impl.value : impl.factory();
    if (p.factory === undefined) {
      throw new Error(
        `No provider bound for "${p.name}": bind it with container.provide(${p.name}, { value })`,
      );
    }
    const entries = Object.entries(p.inject);
    const values = await Promise.all(entries.map(([, dep]) => this.resolve(dep, scope, path)));
    const deps: Record<string, unknown> = {};
    for (let i = 0; i < entries.length; i++) deps[entries[i][0]] = values[i];
    return (p.factory as (deps: Record<string, unknown>) => unknown)(deps);
  }

  /** Records an in-flight creation so that concurrent resolves share it. */
  track(
    p: Provider<unknown>,
    store: Store,
    creation: Promise<unknown>,
    dispose: Disposer | undefined,
  ): Promise<unknown> {
    const tracked = creation.then(
      async (value) => {
        if (store.disposed) {
          if (dispose) await (dispose as (v: unknown) => unknown)(value);
          throw new Error(`Cannot resolve "${p.name}": its ${store.what} was disposed meanwhile`);
        }
        store.pending.delete(p);
        store.ready.set(p, value);
        if (dispose) store.created.push({ value, dispose });
        return value;
      },
      (err) => {
        if (store.pending.get(p) === tracked) store.pending.delete(p);
        throw err;
      },
    );
    // Whoever resolves gets the rejection; this only keeps an abandoned creation (a sibling of
    // a failed resolveAll() key) from becoming an unhandled rejection.
    tracked.catch(() => {});
    store.pending.set(p, tracked);
    return tracked;
  }
}

const engines = new WeakMap<Container, Engine>();

/**
 * Holds bindings and singletons, and creates scopes.
 *
 * @example Overriding a provider in a test
 * ```ts
 * import assert from "node:assert/strict";
 * import { Container, provider } from "@fw/runtime";
 * const Clock = provider({ name: "Clock", factory: () => ({ now: () => Date.now() }) });
 * const container = new Container().override(Clock, { value: { now: () => 42 } });
 * assert.equal((await container.resolve(Clock)).now(), 42);
 * ```
 */
export class Container {
  readonly #engine = new Engine();

  /** Creates an empty container. */
  constructor() {
    engines.set(this, this.#engine);
  }

  /**
   * Binds an abstract provider (or replaces a provider's factory) with a value or factory.
   *
   * @param p The provider.
   * @param impl `{ value }` or `{ factory }`, with an optional `dispose`.
   * @returns This container.
   * @throws {Error} When the provider's singleton value was already created.
   *
   * @example
   * ```ts
   * import assert from "node:assert/strict";
   * import { Container, provider } from "@fw/runtime";
   * const Database = provider<{ url: string }>({ name: "Database" }); // abstract
   * const container = new Container().provide(Database, { value: { url: "postgres://db" } });
   * assert.equal((await container.resolve(Database)).url, "postgres://db");
   * ```
   */
  provide<T>(p: Provider<T>, impl: ProviderImpl<T>): this {
    const { ready, pending } = this.#engine.singletons;
    if (ready.has(p) || pending.has(p)) {
      throw new Error(`Cannot bind provider "${p.name}": its value was already created`);
    }
    this.#engine.bindings.set(p, impl as ProviderImpl<unknown>);
    return this;
  }

  /**
   * Same as {@linkcode Container.provide}, named for tests that replace a real dependency.
   *
   * @param p The provider.
   * @param impl `{ value }` or `{ factory }`.
   * @returns This container.
   * @throws {Error} When the provider's singleton value was already created.
   */
  override<T>(p: Provider<T>, impl: ProviderImpl<T>): this {
    return this.provide(p, impl);
  }

  /**
   * Resolves a singleton provider.
   *
   * @param p A singleton provider.
   * @returns Its value (created once, shared by concurrent callers).
   * @throws {Error} For scoped providers, missing bindings, cycles and singletons needing scoped
   *   values (as a rejected promise).
   */
  resolve<T>(p: Provider<T>): Promise<T> {
    return this.#engine.resolve(p, undefined, NO_PATH) as Promise<T>;
  }

  /**
   * Creates a scope for one request or event invocation.
   *
   * @returns The scope; dispose it when the request or invocation ends.
   */
  createScope(): Scope {
    return new Scope(this);
  }

  /**
   * Disposes every singleton in reverse creation order. Every disposer runs even if one fails;
   * failures are rethrown together. The container cannot resolve afterwards.
   *
   * @throws {AggregateError} When any disposer threw.
   */
  dispose(): Promise<void> {
    return this.#engine.singletons.dispose();
  }
}

/**
 * Scoped values for one request or event invocation.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { Container, provider } from "@fw/runtime";
 * const log: string[] = [];
 * const Tx = provider({
 *   name: "Tx",
 *   lifetime: "scoped",
 *   factory: () => ({ id: Math.random() }),
 *   dispose: () => void log.push("closed"),
 * });
 * const container = new Container();
 * {
 *   await using scope = container.createScope();
 *   const { a, b } = await scope.resolveAll({ a: Tx, b: Tx });
 *   assert.equal(a, b);
 * }
 * assert.deepEqual(log, ["closed"]);
 * ```
 */
export class Scope {
  readonly #engine: Engine;
  readonly #store = new Store("scope");

  /**
   * Creates a scope; prefer {@linkcode Container.createScope}.
   *
   * @param container The container holding singletons and bindings.
   */
  constructor(container: Container) {
    this.#engine = engines.get(container)!;
  }

  /**
   * Resolves a provider: scoped ones once per scope, singletons through the container.
   *
   * @param p The provider.
   * @returns Its value.
   * @throws {Error} For missing bindings, cycles, or a disposed scope (as a rejected promise).
   */
  resolve<T>(p: Provider<T>): Promise<T> {
    return this.#engine.resolve(p, this.#store, NO_PATH) as Promise<T>;
  }

  /**
   * Resolves every provider of a map, concurrently; values that exist already are taken as they
   * are, without waiting.
   *
   * @param deps Names to providers.
   * @returns Names to values.
   * @throws {Error} As {@linkcode Scope.resolve} does, for the first provider that fails.
   */
  resolveAll<D extends ProviderMap>(deps: D): Promise<Resolved<D>> {
    const out: Record<string, unknown> = {};
    let later: string[] | undefined;
    try {
      for (const key in deps) {
        const value = this.#engine.now(deps[key], this.#store, NO_PATH);
        if (value === PENDING) (later ??= []).push(key);
        else out[key] = value;
      }
    } catch (err) {
      return Promise.reject(err);
    }
    if (later === undefined) return Promise.resolve(out as Resolved<D>);
    return Promise.all(
      later.map((key) =>
        this.#engine.resolve(deps[key], this.#store, NO_PATH).then((v) => void (out[key] = v))
      ),
    ).then(() => out as Resolved<D>);
  }

  /**
   * Disposes the scoped values in reverse creation order; the scope cannot resolve afterwards.
   *
   * @throws {AggregateError} When any disposer threw.
   */
  dispose(): Promise<void> {
    return this.#store.dispose();
  }

  /**
   * Same as {@linkcode Scope.dispose}, for `await using`.
   *
   * @returns A promise settled when every disposer has run.
   */
  [Symbol.asyncDispose](): Promise<void> {
    return this.dispose();
  }
}
