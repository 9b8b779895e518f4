/**
 * Proxy trust: reading the client's address, scheme and host from `Forwarded` (RFC 7239) or
 * `X-Forwarded-For` / `-Proto` / `-Host`, through the peers a trust predicate accepts. The
 * predicate itself is compiled from `http({ trustProxy })` by `_trust_proxy.ts`, which `http()`
 * loads only when that option is given.
 *
 * The addresses a request passed through form a list, nearest first: the socket peer, then the
 * forwarded entries from right to left. Walking that list, every address the trust predicate
 * accepts is a proxy of ours; the first one it refuses (or the leftmost entry) is the client.
 * The scheme and host come from the same hop that named the client, so values a client put in
 * front of a header it sent through the proxy are never believed. Headers are read only when the
 * peer itself is trusted.
 *
 * @module
 */

import type { HttpSettings, RequestInfo } from "@fw/runtime";

/**
 * The `http({ trustProxy })` option: `false` (default, ignore forwarding headers), `true` (trust
 * the immediate peer, whatever its address: one hop), a hop count, or trusted addresses and CIDR
 * ranges (an array or a comma-separated string; `loopback`, `linklocal` and `uniquelocal` name the
 * usual private ranges).
 */
export type TrustProxyOption = boolean | number | string | readonly string[];

/** Decides whether the address at `hop` (0: the socket peer) is a proxy of ours. */
export type ProxyTrust = (address: string, hop: number) => boolean;

/**
 * Whether a `trustProxy` option trusts no proxy (unset, `false` or `0`): `http()` then does not
 * load the option's compiler (`_trust_proxy.ts`), which gives no trust for these.
 */
export function trustsNoProxy(option: unknown): boolean {
  return option === undefined || option === false || option === 0;
}

/** One hop a proxy reported: the address it received from, and the scheme and host it saw. */
export interface ForwardedHop {
  /** The address the proxy received the request from (port and brackets removed). */
  readonly for?: string;
  /** The scheme the proxy received the request over. */
  readonly proto?: string;
  /** The `Host` the proxy received. */
  readonly host?: string;
}

function unquote(value: string): string {
  value = value.trim();
  if (value.length >= 2 && value.startsWith('"') && value.endsWith('"')) {
    return value.slice(1, -1).replace(/\\(.)/g, "$1");
  }
  return value;
}

function nodeAddress(node: string): string {
  if (node.startsWith("[")) {
    const end = node.indexOf("]");
    return end < 0 ? node : node.slice(1, end);
  }
  const colon = node.indexOf(":");
  return colon >= 0 && node.indexOf(":", colon + 1) < 0 ? node.slice(0, colon) : node;
}

/**
 * Parses an RFC 7239 `Forwarded` header into hops, leftmost (farthest) first. Malformed pairs are
 * skipped; it never throws.
 *
 * @param header The header value.
 * @returns The hops.
 */
export function parseForwarded(header: string): ForwardedHop[] {
  const hops: ForwardedHop[] = [];
  for (const element of splitOutsideQuotes(header, ",")) {
    const hop: { for?: string; proto?: string; host?: string } = {};
    for (const pair of splitOutsideQuotes(element, ";")) {
      const eq = pair.indexOf("=");
      if (eq < 0) continue;
      const key = pair.slice(0, eq).trim().toLowerCase();
      const value = unquote(pair.slice(eq + 1));
      if (key === "for") hop.for = nodeAddress(value);
      else if (key === "proto") hop.proto = value.toLowerCase();
      else if (key === "host") hop.host = value;
    }
    hops.push(hop);
  }
  return hops;
}

function splitOutsideQuotes(text: string, sep: string): string[] {
  const out: string[] = [];
  let start = 0;
  let quoted = false;
  for (let i = 0; i < text.length; i++) {
    const c = text[i];
    if (c === '"') quoted = !quoted;
    else if (c === "\\" && quoted) i++;
    else if (c === sep && !quoted) {
      out.push(text.slice(start, i));
      start = i + 1;
    }
  }
  out.push(text.slice(start));
  return out.filter((s) => s.trim() !== "");
}

function list(header: string | null): string[] {
  return header === null ? [] : header.split(",").map((s) => s.trim()).filter((s) => s !== "");
}

/** What the trusted proxies say about the client. */
export interface ClientFacts {
  /** The client address, `"unknown"` when not known. */
  readonly address: string;
  /** The scheme the client used, when a trusted proxy reported one. */
  readonly proto?: string;
  /** The host the client asked for, when a trusted proxy reported one. */
  readonly host?: string;
}

/**
 * Works out the client from the peer address and, through trusted proxies, the forwarding
 * headers (`Forwarded` when present, else `X-Forwarded-*`).
 *
 * @param req The request.
 * @param info Connection facts.
 * @param http The HTTP settings (`trustProxy`, `proxyTrust`).
 * @returns The client's address, scheme and host.
 */
export function clientFacts(req: Request, info: RequestInfo, http: HttpSettings): ClientFacts {
  const peer = info.remoteAddr?.hostname ?? "unknown";
  const trust = http.proxyTrust ??
    (http.trustProxy ? (_a: string, hop: number) => hop < 1 : undefined);
  if (trust === undefined || !trust(peer, 0)) return { address: peer };
  const forwarded = req.headers.get("forwarded");
  let hops: ForwardedHop[];
  if (forwarded !== null) {
    hops = parseForwarded(forwarded);
  } else {
    const fors = list(req.headers.get("x-forwarded-for"));
    const protos = list(req.headers.get("x-forwarded-proto"));
    const hosts = list(req.headers.get("x-forwarded-host"));
    // Align proto/host to the right of the address list: each proxy appends; a single value set by
    // the edge proxy applies to the leftmost (client) hop.
    hops = fors.map((f, i) => {
      const fromRight = fors.length - i;
      return {
        for: nodeAddress(f),
        proto: protos[Math.max(0, protos.length - fromRight)]?.toLowerCase(),
        host: hosts[Math.max(0, hosts.length - fromRight)],
      };
    });
    if (hops.length === 0 && (protos.length || hosts.length)) {
      hops = [{ proto: protos[0]?.toLowerCase(), host: hosts[0] }];
    }
  }
  if (hops.length === 0) return { address: peer };
  let hop = hops.length - 1;
  for (let n = 1; hop > 0; n++, hop--) {
    const address = hops[hop].for;
    if (address === undefined || !trust(address, n)) break;
  }
  const chosen = hops[hop];
  return { address: chosen.for ?? peer, proto: chosen.proto, host: chosen.host };
}
