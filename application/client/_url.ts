/**
 * Builds request URLs for the typed client: fills a route pattern (`/users/:id`, `/files/*path`)
 * with percent-encoded values and appends the query string (repeated keys for arrays, ISO 8601 for
 * dates, `undefined` left out). Patterns are split once and cached.
 *
 * @module
 */

type Part = string | { readonly name: string; readonly rest: boolean };

const compiled = new Map<string, readonly Part[]>();

function compile(pattern: string): readonly Part[] {
  const parts: Part[] = [];
  let text = "";
  for (const seg of pattern.split("/").slice(1)) {
    text += "/";
    if (seg[0] === ":" || seg[0] === "*") {
      parts.push(text, { name: seg.slice(1), rest: seg[0] === "*" });
      text = "";
    } else text += seg;
  }
  if (text) parts.push(text);
  compiled.set(pattern, parts);
  return parts;
}

function text(value: unknown): string {
  return value instanceof Date ? value.toISOString() : String(value);
}

/**
 * Fills a route pattern with its parameters.
 *
 * @param pattern The route pattern.
 * @param params Values by name.
 * @returns The path, each value percent-encoded (a catch-all keeps its `/`).
 * @throws {TypeError} When a parameter of the pattern has no value.
 */
export function fillPath(pattern: string, params: Record<string, unknown> | undefined): string {
  const parts = compiled.get(pattern) ?? compile(pattern);
  if (parts.length === 1 && typeof parts[0] === "string") return parts[0];
  let out = "";
  for (const part of parts) {
    if (typeof part === "string") {
      out += part;
      continue;
    }
    const value = params?.[part.name];
    if (value === undefined || value === null || value === "") {
      throw new TypeError(`Missing path parameter "${part.name}" for "${pattern}"`);
    }
    const raw = text(value);
    out += part.rest ? raw.split("/").map(encodeURIComponent).join("/") : encodeURIComponent(raw);
  }
  return out;
}

/**
 * Encodes a query object.
 *
 * @param query Values by key; arrays repeat the key; `undefined` values are left out.
 * @returns `""`, or the query string with its leading `?`.
 */
export function queryString(query: Record<string, unknown> | undefined): string {
  if (!query) return "";
  let out = "";
  for (const key in query) {
    const value = query[key];
    if (value === undefined) continue;
    const name = encodeURIComponent(key);
    if (Array.isArray(value)) {
      for (const v of value) out += `&${name}=${encodeURIComponent(text(v))}`;
    } else out += `&${name}=${encodeURIComponent(text(value))}`;
  }
  return out && "?" + out.slice(1);
}
