/**
 * Proxy trust: which peers may tell us the client's address, scheme and host, and reading those
 * facts from `Forwarded` (RFC 7239) or `X-Forwarded-For` / `-Proto` / `-Host`.
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

const PRESETS: Record<string, string[]> = {
  loopback: ["127.0.0.0/8", "::1/128"],
  linklocal: ["169.254.0.0/16", "fe80::/10"],
  uniquelocal: ["10.0.0.0/8", "172.16.0.0/12", "192.168.0.0/16", "fc00::/7"],
};

/**
 * Parses an IPv4 or IPv6 address to 16 bytes (IPv4 as `::ffff:a.b.c.d`).
 *
 * @param text The address, without brackets or port.
 * @returns The bytes, or `undefined` when it is not an address.
 */
export function parseIp(text: string): Uint8Array | undefined {
  const out = new Uint8Array(16);
  if (!text.includes(":")) {
    const v4 = parseV4(text);
    if (v4 === undefined) return undefined;
    out[10] = out[11] = 0xff;
    out.set(v4, 12);
    return out;
  }
  const zone = text.indexOf("%");
  if (zone >= 0) text = text.slice(0, zone);
  let tail: number[] = [];
  const lastColon = text.lastIndexOf(":");
  if (text.slice(lastColon + 1).includes(".")) {
    const v4 = parseV4(text.slice(lastColon + 1));
    if (v4 === undefined) return undefined;
    tail = [(v4[0] << 8) | v4[1], (v4[2] << 8) | v4[3]];
    text = text.slice(0, lastColon + 1) + "0";
  }
  const halves = text.split("::");
  if (halves.length > 2) return undefined;
  const groups = (s: string) => s === "" ? [] : s.split(":");
  const head = groups(halves[0]);
  const rest = halves.length === 2 ? groups(halves[1]) : [];
  if (tail.length) rest.length ? rest.pop() : head.pop();
  const words: number[] = [];
  for (const g of [...head, ...rest]) {
    if (!/^[0-9a-fA-F]{1,4}$/.test(g)) return undefined;
    words.push(parseInt(g, 16));
  }
  const total = words.length + tail.length;
  if (halves.length === 1 ? total !== 8 : total > 7) return undefined;
  const all = [
    ...words.slice(0, head.length),
    ...new Array(8 - total).fill(0),
    ...words.slice(head.length),
    ...tail,
  ];
  for (let i = 0; i < 8; i++) {
    out[i * 2] = all[i] >> 8;
    out[i * 2 + 1] = all[i] & 0xff;
  }
  return out;
}

function parseV4(text: string): number[] | undefined {
  const parts = text.split(".");
  if (parts.length !== 4) return undefined;
  const bytes: number[] = [];
  for (const p of parts) {
    if (!/^\d{1,3}$/.test(p) || Number(p) > 255) return undefined;
    bytes.push(Number(p));
  }
  return bytes;
}

interface Range {
  readonly bytes: Uint8Array;
  readonly bits: number;
}

function parseRange(entry: string): Range | undefined {
  const slash = entry.indexOf("/");
  const addr = slash < 0 ? entry : entry.slice(0, slash);
  const bytes = parseIp(addr);
  if (bytes === undefined) return undefined;
  const v4 = !addr.includes(":");
  const max = v4 ? 32 : 128;
  let bits = max;
  if (slash >= 0) {
    const b = entry.slice(slash + 1);
    if (!/^\d{1,3}$/.test(b) || Number(b) > max) return undefined;
    bits = Number(b);
  }
  return { bytes, bits: v4 ? bits + 96 : bits };
}

function inRange(ip: Uint8Array, range: Range): boolean {
  let bits = range.bits;
  for (let i = 0; i < 16 && bits > 0; i++, bits -= 8) {
    const mask = bits >= 8 ? 0xff : (0xff << (8 - bits)) & 0xff;
    if ((ip[i] & mask) !== (range.bytes[i] & mask)) return false;
  }
  return true;
}

/**
 * Checks and compiles the `trustProxy` option, at start-up.
 *
 * @param option The option value.
 * @returns The predicate, or `undefined` when no proxy is trusted.
 * @throws {TypeError} For a value of the wrong type, a negative hop count or a bad address or
 *   range (the message names the option and the entry).
 */
export function compileTrustProxy(option: unknown): ProxyTrust | undefined {
  if (option === undefined || option === false || option === 0) return undefined;
  if (option === true) return (_address, hop) => hop < 1;
  if (typeof option === "number") {
    if (!Number.isInteger(option) || option < 0) {
      throw new TypeError(
        `Invalid http() option "trustProxy": expected a non-negative hop count, got ${option}`,
      );
    }
    return (_address, hop) => hop < option;
  }
  const entries = typeof option === "string"
    ? option.split(",")
    : Array.isArray(option) && option.every((e) => typeof e === "string")
    ? option as string[]
    : undefined;
  if (entries === undefined) {
    throw new TypeError(
      `Invalid http() option "trustProxy": expected a boolean, a hop count, or addresses and CIDR ranges`,
    );
  }
  const ranges: Range[] = [];
  for (const raw of entries) {
    const entry = raw.trim();
    for (const one of PRESETS[entry] ?? [entry]) {
      const range = parseRange(one);
      if (range === undefined) {
        throw new TypeError(
          `Invalid http() option "trustProxy": ${
            JSON.stringify(raw)
          } is not an IP address or CIDR range`,
        );
      }
      ranges.push(range);
    }
  }
  if (ranges.length === 0) return undefined;
  return (address) => {
    const ip = parseIp(address);
    return ip !== undefined && ranges.some((r) => inRange(ip, r));
  };
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
