/**
 * The router interface. Implementations are interchangeable and all pass the shared conformance
 * suite (`runRouterConformance` from `@fw/application/testing`).
 *
 * Patterns: static segments, `:name` for one segment, `*name` for the (slash-joined) remainder
 * as the last segment. Precedence: static > `:param` > `*catchall`, with backtracking. A trailing
 * slash is ignored (`/users/` matches `/users`).
 *
 * @module
 */

/** A successful lookup. */
export interface RouteMatch<T> {
  /** The value registered for the route. */
  value: T;
  /** Raw (still percent-encoded) parameter values by name. */
  params: Record<string, string>;
  /** The pattern that matched, as registered. */
  pattern: string;
}

/** Maps method + path to a value. */
export interface Router<T> {
  /**
   * Registers a route.
   *
   * @throws {Error} When the same method and pattern (or an ambiguous sibling parameter) exists.
   */
  add(method: string, pattern: string, value: T): void;
  /** Finds the route for a method and a pathname (without query string). */
  find(method: string, path: string): RouteMatch<T> | undefined;
  /** Methods registered for the route that `path` matches, sorted (for 405 and `Allow`). */
  allowed(path: string): string[];
}

/** Splits a pattern into segments, validating the syntax. */
export function parsePattern(pattern: string): string[] {
  if (typeof pattern !== "string" || !pattern.startsWith("/")) {
    throw new TypeError(`Invalid route pattern "${pattern}": it must start with "/"`);
  }
  const trimmed = pattern.length > 1 ? pattern.replace(/\/+$/, "") : pattern;
  const segments = trimmed === "/" ? [] : trimmed.slice(1).split("/");
  segments.forEach((s, i) => {
    if (s === "") throw new TypeError(`Invalid route pattern "${pattern}": empty segment`);
    if ((s[0] === ":" || s[0] === "*") && !/^[:*][A-Za-z_$][\w$]*$/.test(s)) {
      throw new TypeError(`Invalid route pattern "${pattern}": bad parameter name "${s}"`);
    }
    if (s[0] === "*" && i !== segments.length - 1) {
      throw new TypeError(`Invalid route pattern "${pattern}": "${s}" must be the last segment`);
    }
  });
  return segments;
}
