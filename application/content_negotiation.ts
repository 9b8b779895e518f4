/**
 * Content negotiation for object and array results: picks the response format from the
 * request's `Accept` header, honouring q-values.
 *
 * A missing or empty `Accept` (or one of empty list elements only), the full wildcard and `application/*` give JSON. Among acceptable types the
 * highest q wins; ties go to the more specific range (`text/html` over `text/*`), then to the
 * range listed first, then to the server's order (the order of {@linkcode MEDIA_TYPES}).
 *
 * @module
 */

/** How a negotiated value is written. */
export type ResponseFormat = "json" | "yaml" | "html" | "xml";

/** One media type the server can produce. */
export interface MediaType {
  /** The media type matched against `Accept` (`text/plain`). */
  readonly type: string;
  /** How the body is written. */
  readonly format: ResponseFormat;
  /** The `Content-Type` sent. */
  readonly contentType: string;
}

/** The media types produced for object and array results, in the server's order of preference. */
export const MEDIA_TYPES: readonly MediaType[] = Object.freeze(
  [
    { type: "application/json", format: "json", contentType: "application/json" },
    { type: "text/plain", format: "yaml", contentType: "text/plain;charset=UTF-8" },
    { type: "text/html", format: "html", contentType: "text/html; charset=utf-8" },
    { type: "application/xml", format: "xml", contentType: "application/xml; charset=utf-8" },
    { type: "text/xml", format: "xml", contentType: "application/xml; charset=utf-8" },
    { type: "application/yaml", format: "yaml", contentType: "application/yaml; charset=utf-8" },
    { type: "text/yaml", format: "yaml", contentType: "text/yaml; charset=utf-8" },
  ] as const,
);

const JSON_TYPE = MEDIA_TYPES[0];

/** One parsed entry of an `Accept` header. */
export interface AcceptEntry {
  /** Main type, lower case (`*` for any). */
  readonly type: string;
  /** Subtype, lower case (`*` for any). */
  readonly subtype: string;
  /** Quality, 0 to 1. */
  readonly q: number;
}

const TOKEN = /^[!#$%&'*+.^_`|~0-9a-z-]+$/;

/**
 * Parses an `Accept` header. Malformed entries are skipped; a bare `*` counts as the full
 * wildcard (type and subtype `*`).
 *
 * @param header The header value.
 * @returns The entries in header order.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { parseAccept } from "@fw/application/content-negotiation";
 * assert.deepEqual(parseAccept("text/html;q=0.5, application/json"), [
 *   { type: "text", subtype: "html", q: 0.5 },
 *   { type: "application", subtype: "json", q: 1 },
 * ]);
 * ```
 */
export function parseAccept(header: string): AcceptEntry[] {
  const entries: AcceptEntry[] = [];
  for (const part of header.split(",")) {
    const pieces = part.split(";");
    const range = pieces[0].trim().toLowerCase();
    if (range === "") continue;
    const slash = range.indexOf("/");
    const type = slash < 0 ? range : range.slice(0, slash);
    const subtype = slash < 0 ? (range === "*" ? "*" : "") : range.slice(slash + 1);
    if (!TOKEN.test(type) || !TOKEN.test(subtype) || (type === "*" && subtype !== "*")) continue;
    let q = 1;
    for (let i = 1; i < pieces.length; i++) {
      const param = pieces[i].trim().toLowerCase();
      if (!param.startsWith("q=")) continue;
      const value = param.slice(2).trim();
      q = /^(0(\.\d{0,3})?|1(\.0{0,3})?)$/.test(value) ? Number(value) : NaN;
    }
    if (Number.isNaN(q)) continue;
    entries.push({ type, subtype, q });
  }
  return entries;
}

function specificity(entry: AcceptEntry, type: string, subtype: string): number {
  if (entry.type === "*") return 0;
  if (entry.type !== type) return -1;
  if (entry.subtype === "*") return 1;
  return entry.subtype === subtype ? 2 : -1;
}

/**
 * Picks the media type for an object or array result.
 *
 * @param accept The request's `Accept` header (`null` when absent).
 * @returns The chosen media type, or `undefined` when nothing acceptable can be produced (406).
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { negotiate } from "@fw/application/content-negotiation";
 * assert.equal(negotiate(null)?.format, "json");
 * assert.equal(negotiate("text/html;q=0.4, application/xml;q=0.9")?.contentType,
 *   "application/xml; charset=utf-8");
 * assert.equal(negotiate("application/pdf"), undefined);
 * ```
 */
export function negotiate(accept: string | null): MediaType | undefined {
  if (accept === null || accept === "*/*" || accept === "application/json" || accept === "") {
    return JSON_TYPE;
  }
  // Clients send the same few Accept values over and over (a browser's, a fetch library's):
  // remember the answers, within a bound so that random headers cannot grow the cache.
  const known = seen.get(accept);
  if (known !== undefined) return known ?? undefined;
  const chosen = choose(accept);
  if (seen.size >= SEEN_LIMIT) seen.clear();
  seen.set(accept, chosen ?? null);
  return chosen;
}

const SEEN_LIMIT = 256;
const seen = new Map<string, MediaType | null>();

function choose(accept: string): MediaType | undefined {
  const entries = parseAccept(accept);
  if (entries.length === 0) {
    // a header of empty list elements only (`Accept: ,`) says nothing, like an absent one
    return /^[\s,]*$/.test(accept) ? JSON_TYPE : undefined;
  }
  let best: MediaType | undefined;
  let bestQ = 0, bestSpec = -1, bestIndex = 0;
  for (const media of MEDIA_TYPES) {
    const slash = media.type.indexOf("/");
    const type = media.type.slice(0, slash), subtype = media.type.slice(slash + 1);
    let q = 0, spec = -1, index = 0;
    for (let i = 0; i < entries.length; i++) {
      const s = specificity(entries[i], type, subtype);
      if (s > spec) {
        spec = s;
        q = entries[i].q;
        index = i;
      }
    }
    if (spec < 0 || q <= 0) continue;
    if (
      best === undefined || q > bestQ || (q === bestQ && spec > bestSpec) ||
      (q === bestQ && spec === bestSpec && index < bestIndex)
    ) {
      best = media;
      bestQ = q;
      bestSpec = spec;
      bestIndex = index;
    }
  }
  return best;
}
