/**
 * Providers: typed recipes for injectable values. A {@linkcode Provider} names a value, its
 * lifetime, the providers it needs and how to make and release it; a `Container` (see `di.ts`)
 * turns providers into values.
 *
 * `endpoint().inject({ db: Database })` and `handler(Topic).inject({...})` take maps of providers.
 *
 * @module
 */

/** How long a provided value lives. */
export type Lifetime = "singleton" | "scoped";

/** Binding of a provider to a value or a factory, given to `Container.provide()` and `override()`. */
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
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { isProvider, provider } from "@fw/runtime";
 * assert.equal(isProvider(provider({ name: "Config", factory: () => ({}) })), true);
 * assert.equal(isProvider({ name: "Config" }), false);
 * ```
 */
export function isProvider(value: unknown): value is Provider<unknown> {
  return typeof value === "object" && value !== null &&
    typeof (value as Provider<unknown>).name === "string" &&
    ((value as Provider<unknown>).lifetime === "singleton" ||
      (value as Provider<unknown>).lifetime === "scoped") &&
    "inject" in value;
}
