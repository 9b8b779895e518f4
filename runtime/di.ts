/**
 * Typed dependency injection. A {@linkcode Provider} describes how to make one value and what it
 * needs; a {@linkcode Container} holds singletons; a {@linkcode Scope} (one per request or event
 * invocation) holds scoped values and disposes them, in reverse creation order, when it ends.
 *
 * `endpoint().inject({ db: Database })` and `handler(Topic).inject({...})` resolve their providers
 * in the scope of each request or invocation.
 *
 * @module
 */

/** How long a provided value lives. */
export type Lifetime = "singleton" | "scoped";

/** Binding of a provider to a value or a factory (see {@linkcode Container.provide}). */
export type ProviderImpl<T> =
  | { value: T; dispose?: (value: T) => void | Promise<void> }
  | { factory: () => T | Promise<T>; dispose?: (value: T) => void | Promise<void> };

/** Options of {@linkcode provider}. */
export interface ProviderOptions<T, D extends ProviderMap> {
  /** Name used in error messages (`No provider bound for "Database"`). */
  name: string;
  /** `singleton` (default): one per container. `scoped`: one per scope (request / event). */
  lifetime?: Lifetime;
  /**
   * Providers the factory needs; resolved first and passed in. A function returning the map
   * allows forward references (it is called once, at first use).
   */
  inject?: D | (() => D);
  /** Makes the value. Omit it for an abstract provider that the application binds. */
  factory?: (deps: Resolved<D>) => T | Promise<T>;
  /** Releases the value when its scope or container is disposed. */
  dispose?: (value: T) => void | Promise<void>;
}

/** A typed recipe for one injectable value. Create it with {@linkcode provider}. */
export interface Provider<T> {
  /** Name used in error messages. */
  readonly name: string;
  /** Lifetime of the value. */
  readonly lifetime: Lifetime;
  /** Dependencies. */
  readonly inject: ProviderMap;
  /** The factory, absent for abstract providers. */
  factory?(deps: never): T | Promise<T>;
  /** The disposer. */
  dispose?(value: T): void | Promise<void>;
  /** Phantom field carrying the value type. */
  readonly "~value"?: T;
}

/** A map of names to providers, as given to `.inject()`. */
export type ProviderMap = { readonly [name: string]: Provider<unknown> };

/** The resolved values of a {@linkcode ProviderMap}. */
export type Resolved<D extends ProviderMap> = {
  -readonly [K in keyof D]: D[K] extends Provider<infer T> ? T : never;
};

/**
 * Declares a provider.
 *
 * @param options Name, lifetime, dependencies, factory and disposer.
 * @returns The provider.
 * @throws {TypeError} When the name is empty or the lifetime unknown.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { Container, provider } from "@fw/runtime";
 * const Config = provider({ name: "Config", factory: () => ({ url: "postgres://db" }) });
 * const Db = provider({
 *   name: "Db",
 *   inject: { config: Config },
 *   factory: ({ config }) => ({ url: config.url, open: true }),
 * });
 * const container = new Container();
 * assert.equal((await container.resolve(Db)).url, "postgres://db");
 * ```
 */
export function provider<T, D extends ProviderMap = Record<never, never>>(
  options: ProviderOptions<T, D>,
): Provider<T> {
  if (typeof options?.name !== "string" || options.name === "") {
    throw new TypeError('provider() needs a non-empty "name"');
  }
  const lifetime = options.lifetime ?? "singleton";
  if (lifetime !== "singleton" && lifetime !== "scoped") {
    throw new TypeError(
      `provider("${options.name}"): "lifetime" must be "singleton" or "scoped", got "${lifetime}"`,
    );
  }
  const name = options.name;
  const check = (deps: ProviderMap): ProviderMap => {
    for (const [key, dep] of Object.entries(deps)) {
      if (!isProvider(dep)) {
        throw new TypeError(`provider("${name}"): inject.${key} is not a provider`);
      }
    }
    return Object.freeze({ ...deps });
  };
  const given = options.inject;
  let inject: ProviderMap | undefined = typeof given === "function"
    ? undefined
    : check(given ?? {});
  return Object.freeze({
    name,
    lifetime,
    get inject(): ProviderMap {
      return inject ??= check((given as () => D)());
    },
    factory: options.factory as Provider<T>["factory"],
    dispose: options.dispose,
  });
}

/**
 * Tells whether a value is a provider.
 *
 * @param value Anything.
 * @returns True for values made by {@linkcode provider}.
 */
export function isProvider(value: unknown): value is Provider<unknown> {
  return typeof value === "object" && value !== null &&
    typeof (value as Provider<unknown>).name === "string" &&
    ((value as Provider<unknown>).lifetime === "singleton" ||
      (value as Provider<unknown>).lifetime === "scoped") &&
    "inject" in value;
}

interface Created {
  value: unknown;
  dispose: (value: never) => void | Promise<void>;
}

type Cache = Map<Provider<unknown>, Promise<unknown>>;

function cyclePath(path: readonly Provider<unknown>[], p: Provider<unknown>): string {
  const start = path.indexOf(p);
  return [...path.slice(start), p].map((x) => `"${x.name}"`).join(" -> ");
}

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
  readonly #bindings = new Map<Provider<unknown>, ProviderImpl<unknown>>();
  readonly #singletons: Cache = new Map();
  readonly #created: Created[] = [];
  #disposed = false;

  /**
   * Binds an abstract provider (or replaces a provider's factory) with a value or factory.
   *
   * @param p The provider.
   * @param impl `{ value }` or `{ factory }`, with an optional `dispose`.
   * @returns This container.
   * @throws {Error} When the provider's value was already created.
   */
  provide<T>(p: Provider<T>, impl: ProviderImpl<T>): this {
    if (this.#singletons.has(p)) {
      throw new Error(`Cannot bind provider "${p.name}": its value was already created`);
    }
    this.#bindings.set(p, impl as ProviderImpl<unknown>);
    return this;
  }

  /**
   * Same as {@linkcode Container.provide}, named for tests that replace a real dependency.
   *
   * @param p The provider.
   * @param impl `{ value }` or `{ factory }`.
   * @returns This container.
   */
  override<T>(p: Provider<T>, impl: ProviderImpl<T>): this {
    return this.provide(p, impl);
  }

  /**
   * Resolves a singleton provider.
   *
   * @param p A singleton provider.
   * @returns Its value (created once, shared by concurrent callers).
   * @throws {Error} For scoped providers, missing bindings, cycles and singletons needing scoped values.
   */
  resolve<T>(p: Provider<T>): Promise<T> {
    if (p.lifetime === "scoped") {
      return Promise.reject(
        new Error(
          `Scoped provider "${p.name}" can only be resolved inside a scope: use container.createScope()`,
        ),
      );
    }
    return this.#resolve(p, undefined, []) as Promise<T>;
  }

  /** Creates a scope for one request or event invocation. */
  createScope(): Scope {
    return new Scope(this);
  }

  /** @internal Resolution shared with {@linkcode Scope}. */
  _resolve(
    p: Provider<unknown>,
    scope: ScopeState | undefined,
    path: Provider<unknown>[],
  ): Promise<unknown> {
    return this.#resolve(p, scope, path);
  }

  #resolve(
    p: Provider<unknown>,
    scope: ScopeState | undefined,
    path: Provider<unknown>[],
  ): Promise<unknown> {
    if (path.includes(p)) return Promise.reject(new Error(`Provider cycle: ${cyclePath(path, p)}`));
    if (this.#disposed) return Promise.reject(new Error("Container is disposed"));
    const scoped = p.lifetime === "scoped";
    if (scoped && !scope) {
      const from = path.at(-1);
      return Promise.reject(
        new Error(
          `Singleton provider "${from?.name}" cannot depend on scoped provider "${p.name}"`,
        ),
      );
    }
    const cache = scoped ? scope!.cache : this.#singletons;
    const hit = cache.get(p);
    if (hit) return hit;
    const created = scoped ? scope!.created : this.#created;
    const promise = this.#create(p, scoped ? scope : undefined, [...path, p], created);
    cache.set(p, promise);
    promise.catch(() => cache.get(p) === promise && cache.delete(p));
    return promise;
  }

  async #create(
    p: Provider<unknown>,
    scope: ScopeState | undefined,
    path: Provider<unknown>[],
    created: Created[],
  ): Promise<unknown> {
    const impl = this.#bindings.get(p);
    if (impl && "value" in impl) {
      if (impl.dispose) created.push({ value: impl.value, dispose: impl.dispose });
      return impl.value;
    }
    if (impl) {
      const value = await impl.factory();
      if (impl.dispose) created.push({ value, dispose: impl.dispose });
      return value;
    }
    if (!p.factory) {
      throw new Error(
        `No provider bound for "${p.name}": bind it with container.provide(${p.name}, { value })`,
      );
    }
    const deps: Record<string, unknown> = {};
    const entries = Object.entries(p.inject);
    const values = await Promise.all(entries.map(([, dep]) => this.#resolve(dep, scope, path)));
    for (let i = 0; i < entries.length; i++) deps[entries[i][0]] = values[i];
    const value = await (p.factory as (deps: Record<string, unknown>) => unknown)(deps);
    if (p.dispose) created.push({ value, dispose: p.dispose });
    return value;
  }

  /**
   * Disposes every singleton in reverse creation order. Every disposer runs even if one fails;
   * failures are rethrown together.
   *
   * @throws {AggregateError} When any disposer threw.
   */
  async dispose(): Promise<void> {
    this.#disposed = true;
    await disposeAll(this.#created, "container");
    this.#singletons.clear();
  }
}

/** @internal State of a scope. */
export interface ScopeState {
  /** Scoped values by provider. */
  readonly cache: Cache;
  /** Values to dispose, in creation order. */
  readonly created: Created[];
}

async function disposeAll(created: Created[], what: string): Promise<void> {
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
export class Scope implements ScopeState {
  /** @internal */
  readonly cache: Cache = new Map();
  /** @internal */
  readonly created: Created[] = [];
  readonly #container: Container;

  /**
   * Creates a scope; prefer {@linkcode Container.createScope}.
   *
   * @param container The container holding singletons and bindings.
   */
  constructor(container: Container) {
    this.#container = container;
  }

  /**
   * Resolves a provider: scoped ones once per scope, singletons through the container.
   *
   * @param p The provider.
   * @returns Its value.
   */
  resolve<T>(p: Provider<T>): Promise<T> {
    return this.#container._resolve(p, this, []) as Promise<T>;
  }

  /**
   * Resolves every provider of a map.
   *
   * @param deps Names to providers.
   * @returns Names to values.
   */
  async resolveAll<D extends ProviderMap>(deps: D): Promise<Resolved<D>> {
    const out: Record<string, unknown> = {};
    for (const key in deps) out[key] = await this.#container._resolve(deps[key], this, []);
    return out as Resolved<D>;
  }

  /**
   * Disposes the scoped values in reverse creation order.
   *
   * @throws {AggregateError} When any disposer threw.
   */
  dispose(): Promise<void> {
    this.cache.clear();
    return disposeAll(this.created, "scope");
  }

  /** Same as {@linkcode Scope.dispose}, for `await using`. */
  [Symbol.asyncDispose](): Promise<void> {
    return this.dispose();
  }
}
