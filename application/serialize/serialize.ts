/**
 * Writes object and array results in the negotiated format: JSON, YAML (also as
 * `text/plain`), a minimal HTML page wrapping the escaped JSON, or XML.
 *
 * Every format other than JSON first normalises the value the way `JSON.stringify` does
 * (`toJSON()`, dropped `undefined`, `NaN` as `null`), so all formats carry the same data.
 *
 * The YAML and XML writers (and the npm packages behind them) are loaded the first time a client
 * asks for that format, so an application that only ever answers JSON never loads them.
 *
 * @module
 */

import type { ResponseFormat } from "../content_negotiation.ts";

type Writer = (value: unknown) => string;

let toYaml: Writer | undefined;
let toXml: Writer | undefined;

/** Loads the writer of `format` ("yaml" or "xml") once. */
async function load(format: "yaml" | "xml"): Promise<Writer> {
  if (format === "yaml") return toYaml ??= (await import("./_yaml.ts")).toYaml;
  return toXml ??= (await import("./_xml.ts")).toXml;
}

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
 * JSON and HTML are written synchronously; YAML and XML too once their writer is loaded, and
 * through a promise the first time (the writer's module is imported then).
 *
 * @param value The handler's result.
 * @param format The format chosen by `negotiate()`.
 * @returns The body text, or a promise of it while the format's writer loads.
 * @throws {TypeError} When the value cannot be serialised (a `BigInt`, a cycle); the promise
 *   rejects with it when the writer was still loading.
 */
export function serialize(value: unknown, format: ResponseFormat): string | Promise<string> {
  const text = JSON.stringify(value) ?? "null";
  if (format === "json") return text;
  const plain: unknown = JSON.parse(text);
  if (format === "html") return toHtml(plain);
  const writer = format === "yaml" ? toYaml : toXml;
  if (writer !== undefined) return writer(plain);
  return load(format).then((write) => write(plain));
}
