/**
 * The check shared by the PostgreSQL and Redis connection sources (`_postgres.ts`, `_redis.ts`):
 * exactly one of `url` and `client`, a URL with an accepted scheme, a client with the needed
 * methods.
 *
 * @module
 */

/** What {@linkcode checkConnectionSource} checks for one kind of server. */
export interface ConnectionSourceRules {
  /** Accepted URL schemes, with the colon (`"redis:"`). */
  readonly schemes: readonly string[];
  /** What the message says was expected, such as `a postgres:// URL`. */
  readonly expected: string;
  /** Describes a rejected URL for the message (without its password). */
  readonly describeUrl: (url: string) => string;
  /** The server's name in messages (`PostgreSQL`). */
  readonly product: string;
  /** Methods a given client must have. */
  readonly methods: readonly string[];
}

/**
 * Checks a source `{ url } | { client }` given to `owner`.
 *
 * @param owner Name for messages, such as `sqlTransport()`.
 * @param source The source.
 * @param rules See {@linkcode ConnectionSourceRules}.
 * @throws {TypeError} Naming the option that is wrong.
 */
export function checkConnectionSource(
  owner: string,
  source: { readonly url?: string; readonly client?: unknown },
  rules: ConnectionSourceRules,
): void {
  const { url, client } = source ?? {};
  if ((url === undefined) === (client === undefined)) {
    throw new TypeError(`Invalid ${owner} options: give either "url" or "client"`);
  }
  if (url !== undefined) {
    let scheme = "";
    try {
      scheme = new URL(url).protocol;
    } catch {
      // reported below
    }
    if (!rules.schemes.includes(scheme)) {
      throw new TypeError(
        `Invalid ${owner} option "url": expected ${rules.expected}, got ${
          rules.describeUrl(String(url))
        }`,
      );
    }
  }
  if (client !== undefined) {
    for (const method of rules.methods) {
      if (typeof (client as Record<string, unknown>)[method] !== "function") {
        throw new TypeError(
          `Invalid ${owner} option "client": the ${rules.product} client has no ${method}() method`,
        );
      }
    }
  }
}
