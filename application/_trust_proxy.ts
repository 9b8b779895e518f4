/**
 * Compiles `http({ trustProxy })` into the trust predicate `clientFacts()` (`_proxy.ts`) walks the
 * forwarded hops with: a hop count, or addresses and CIDR ranges (IPv4 and IPv6). `http()` loads
 * this module at set-up only when the option is given, so an application that trusts no proxy
 * never loads the address parsing.
 *
 * @module
 */

import { type ProxyTrust, trustsNoProxy } from "./_proxy.ts";

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
  if (trustsNoProxy(option)) return undefined;
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
