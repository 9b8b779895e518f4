/**
 * What the dashboard never shows: identity attributes (`auth.*`, which the publisher copies from
 * the verified user), and anything named like an `Authorization` header or a cookie. Internal.
 *
 * @module
 */

const HIDDEN = /^auth\.|authorization|cookie|^dlq\./i;

/**
 * Whether an attribute or field name is kept out of the dashboard.
 *
 * @param name The name.
 * @returns `true` for `auth.*`, authorization and cookie names, and the `dlq.*` bookkeeping
 *   (shown as fields of their own).
 */
export function hidden(name: string): boolean {
  return HIDDEN.test(name);
}

/**
 * A copy without the hidden names.
 *
 * @param attributes String attributes (or span attributes).
 * @returns The shown part.
 */
export function redact<V>(attributes: Readonly<Record<string, V>>): Record<string, V> {
  const out: Record<string, V> = {};
  for (const [k, v] of Object.entries(attributes)) if (!hidden(k)) out[k] = v;
  return out;
}
