/**
 * A parsed query string with the reading half of `URLSearchParams` (`get`, `getAll`, `has`,
 * iteration), parsed in JavaScript. `new URLSearchParams()` crosses into the runtime's native URL
 * code on every request; this parser costs a few string scans for a typical query and decodes
 * only the parts that contain `%` or `+`. Decoding follows the WHATWG `application/x-www-form-urlencoded`
 * parser exactly: `+` is a space, malformed percent-escapes are kept as written and invalid UTF-8
 * becomes U+FFFD.
 *
 * @module
 */

/** The reading half of `URLSearchParams`: what the `query` validators read. */
export interface QueryReader {
  /** The first value of `key`, or `null`. */
  get(key: string): string | null;
  /** Every value of `key`, in order (empty when absent). */
  getAll(key: string): string[];
  /** True when `key` occurs at least once. */
  has(key: string): boolean;
  /** The pairs, in order. */
  [Symbol.iterator](): IterableIterator<[string, string]>;
}

function decode(part: string): string {
  let s = part;
  if (s.includes("+")) s = s.replaceAll("+", " ");
  if (!s.includes("%")) return s;
  try {
    return decodeURIComponent(s);
  } catch {
    // malformed escapes or invalid UTF-8: the lenient WHATWG decoder
    for (const [, value] of new URLSearchParams("a=" + part)) return value;
    return s;
  }
}

/**
 * A query string parsed once into its decoded pairs; values are read by key (a scan of the
 * pairs: queries are short, and a scan beats hashing at that size). Keys are compared after
 * decoding, as in `URLSearchParams`.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { QueryString } from "@fw/runtime";
 *
 * const q = new QueryString("?tag=a&tag=b%20c&limit=10&q=x+y");
 * assert.equal(q.get("limit"), "10");
 * assert.deepEqual(q.getAll("tag"), ["a", "b c"]);
 * assert.equal(q.get("q"), "x y");
 * assert.equal(q.has("missing"), false);
 * ```
 */
export class QueryString implements QueryReader {
  /** Decoded keys and values, alternating, in order. */
  readonly #pairs: string[] = [];

  /**
   * Parses a query string.
   *
   * @param query The query string, with or without its leading `?`.
   */
  constructor(query: string) {
    const pairs = this.#pairs;
    const length = query.length;
    let start = query.charCodeAt(0) === 63 ? 1 : 0;
    let eq = -1;
    let encoded = false;
    // One scan: `&` ends a pair, the first `=` splits it, `%` or `+` means it needs decoding.
    for (let i = start; i <= length; i++) {
      const c = i === length ? 38 : query.charCodeAt(i);
      if (c === 38) {
        if (i > start) {
          let key: string, value: string;
          if (eq === -1) {
            key = query.slice(start, i);
            value = "";
          } else {
            key = query.slice(start, eq);
            value = query.slice(eq + 1, i);
          }
          if (encoded) {
            key = decode(key);
            value = decode(value);
          }
          pairs.push(key, value);
        }
        start = i + 1;
        eq = -1;
        encoded = false;
      } else if (c === 61) {
        if (eq === -1) eq = i;
      } else if (c === 37 || c === 43) {
        encoded = true;
      }
    }
  }

  /** The first value of `key`, or `null`. */
  get(key: string): string | null {
    const pairs = this.#pairs;
    for (let i = 0; i < pairs.length; i += 2) if (pairs[i] === key) return pairs[i + 1];
    return null;
  }

  /** Every value of `key`, in order. */
  getAll(key: string): string[] {
    const pairs = this.#pairs;
    const out: string[] = [];
    for (let i = 0; i < pairs.length; i += 2) if (pairs[i] === key) out.push(pairs[i + 1]);
    return out;
  }

  /** True when `key` occurs. */
  has(key: string): boolean {
    const pairs = this.#pairs;
    for (let i = 0; i < pairs.length; i += 2) if (pairs[i] === key) return true;
    return false;
  }

  /** The pairs in order (as `URLSearchParams` yields them). */
  *[Symbol.iterator](): IterableIterator<[string, string]> {
    const pairs = this.#pairs;
    for (let i = 0; i < pairs.length; i += 2) yield [pairs[i], pairs[i + 1]];
  }
}
