/**
 * Writes object and array results in the negotiated format (spec 4.2): JSON, YAML (also as
 * `text/plain`), a minimal HTML page wrapping the escaped JSON, or XML.
 *
 * Every format other than JSON first normalises the value the way `JSON.stringify` does
 * (`toJSON()`, dropped `undefined`, `NaN` as `null`), so all formats carry the same data.
 *
 * @module
 */

import type { ResponseFormat } from "../content_negotiation.ts";
import { toXml } from "./_xml.ts";
import { toYaml } from "./_yaml.ts";

const HTML_ESCAPES: Record<string, string> = {
  "&": "&amp;",
  "<": "&lt;",
  ">": "&gt;",
  '"': "&quot;",
  "'": "&#39;",
};

/**
 * Escapes text for HTML content and attribute values.
 *
 * @param text The text.
 * @returns The escaped text.
 */
export function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (c) => HTML_ESCAPES[c]);
}

/**
 * A minimal HTML page showing `value` as indented, escaped JSON.
 *
 * @param value The value.
 * @returns The HTML document.
 */
export function toHtml(value: unknown): string {
  const body = escapeHtml(JSON.stringify(value, null, 2) ?? "null");
  return '<!DOCTYPE html>\n<html><head><meta charset="utf-8"><title>Response</title></head>' +
    `<body><pre>${body}</pre></body></html>\n`;
}

/**
 * Serialises a result in a negotiated format.
 *
 * @param value The handler's result.
 * @param format The format chosen by `negotiate()`.
 * @returns The body text.
 * @throws {TypeError} When the value cannot be serialised (a `BigInt`, a cycle).
 */
export function serialize(value: unknown, format: ResponseFormat): string {
  const text = JSON.stringify(value) ?? "null";
  if (format === "json") return text;
  const plain: unknown = JSON.parse(text);
  if (format === "yaml") return toYaml(plain);
  if (format === "xml") return toXml(plain);
  return toHtml(plain);
}
