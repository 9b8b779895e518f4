/**
 * `LatePart`: a part of the endpoint compiler that loads on demand (the stream code, the route
 * policies) and installs itself when its module is evaluated. `compileEndpoint()` asks for it only
 * for routes that need it; `api()` loads it at warmup when one does.
 *
 * @module
 */

/** A compiler part installed by the module that implements it. */
export class LatePart<T> {
  #value: T | undefined;

  /** @param what What the part is, for the error (`stream`, `policy`). */
  constructor(readonly what: string) {}

  /**
   * Installs the part; its module calls this when it is evaluated.
   *
   * @param value The part.
   */
  install(value: T): void {
    this.#value = value;
  }

  /** True once the part's module was loaded. */
  get loaded(): boolean {
    return this.#value !== undefined;
  }

  /**
   * The part, for the route `label`.
   *
   * @param label `METHOD /route`.
   * @returns The part.
   * @throws {TypeError} When its module is not loaded, naming the import that loads it.
   */
  require(label: string): T {
    if (this.#value === undefined) {
      throw new TypeError(
        `Cannot compile route "${label}": the ${this.what} code is not loaded; ` +
          `api() loads it at warmup, a direct caller of compileEndpoint() imports it from "@fw/application/compile"`,
      );
    }
    return this.#value;
  }
}
