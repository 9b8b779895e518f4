/**
 * Transport selection: routes by the topic's channel first, then routes whose `match`
 * pattern fits the topic name, then `defaultTransport`.
 *
 * Patterns: `*` stands for one dotted segment, `**` (or a trailing `>`) for any number of
 * segments; anything else must match literally. `orders.*` matches `orders.created`, not
 * `orders.created.dlq`; `orders.**` matches both.
 *
 * @module
 */

/** One routing rule of `events({ routes })`. */
export type RouteRule =
  | { readonly channel: string; readonly transport: string }
  | { readonly match: string; readonly transport: string };

/** Compiled rules. */
export interface TransportRouter {
  /**
   * The transport name for a topic.
   *
   * @param topic Topic name.
   * @param channel The topic's channel, if any.
   * @returns A key of the transports map.
   * @throws {Error} When no rule fits and there is no default.
   */
  select(topic: string, channel?: string): string;
}

function compilePattern(pattern: string): RegExp {
  const parts = pattern.split(".").map((seg, i, all) => {
    if (seg === "**" || (seg === ">" && i === all.length - 1)) return "(?:[^.]+(?:\\.[^.]+)*)";
    if (seg === "*") return "[^.]+";
    return seg.replace(/[\\^$+?()[\]{}|*]/g, "\\$&");
  });
  return new RegExp(`^${parts.join("\\.")}$`);
}

/**
 * Compiles routing rules.
 *
 * @param routes The rules, in order.
 * @param transports Known transport names.
 * @param defaultTransport Fallback name.
 * @returns The router.
 * @throws {TypeError} When a rule or the default names an unknown transport, or a rule is malformed.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { createTransportRouter } from "@fw/events";
 * const router = createTransportRouter(
 *   [{ match: "audit.**", transport: "kv" }, { channel: "billing", transport: "redis" }],
 *   ["kv", "redis", "memory"],
 *   "memory",
 * );
 * assert.equal(router.select("audit.login"), "kv");
 * assert.equal(router.select("audit.login", "billing"), "redis");
 * assert.equal(router.select("orders.created"), "memory");
 * ```
 */
export function createTransportRouter(
  routes: readonly RouteRule[],
  transports: readonly string[],
  defaultTransport?: string,
): TransportRouter {
  const known = new Set(transports);
  const byChannel = new Map<string, string>();
  const byMatch: Array<[RegExp, string]> = [];
  routes.forEach((rule, i) => {
    const r = rule as { channel?: unknown; match?: unknown; transport?: unknown };
    if (typeof r.transport !== "string" || !known.has(r.transport)) {
      throw new TypeError(
        `Invalid events option "routes[${i}].transport": "${
          String(r.transport)
        }" is not a key of transports (${[...known].map((k) => `"${k}"`).join(", ")})`,
      );
    }
    if (typeof r.channel === "string" && r.channel) {
      if (!byChannel.has(r.channel)) byChannel.set(r.channel, r.transport);
    } else if (typeof r.match === "string" && r.match) {
      byMatch.push([compilePattern(r.match), r.transport]);
    } else {
      throw new TypeError(
        `Invalid events option "routes[${i}]": expected { channel, transport } or { match, transport }`,
      );
    }
  });
  if (defaultTransport !== undefined && !known.has(defaultTransport)) {
    throw new TypeError(
      `Invalid events option "defaultTransport": "${defaultTransport}" is not a key of transports`,
    );
  }
  const cache = new Map<string, string>();
  return {
    select(topic: string, channel?: string): string {
      const cacheKey = channel === undefined ? topic : `${topic}\u0000${channel}`;
      const hit = cache.get(cacheKey);
      if (hit) return hit;
      let name = channel !== undefined ? byChannel.get(channel) : undefined;
      if (!name) name = byMatch.find(([re]) => re.test(topic))?.[1];
      name ??= defaultTransport;
      if (!name) {
        throw new Error(
          `No transport for topic "${topic}": add a route for it or set "defaultTransport"`,
        );
      }
      cache.set(cacheKey, name);
      return name;
    },
  };
}
