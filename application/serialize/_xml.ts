/**
 * XML output of content negotiation: the only module that imports `fast-xml-parser`.
 *
 * Mapping: the value is wrapped in a `root` element; object keys become elements; array items
 * become repeated `item` elements; `null` becomes an empty element; numbers and booleans become
 * text. Key names that are not valid XML names are sanitised (invalid characters become `_`, and
 * a name that starts with a digit, `-`, `.` or `xml` is prefixed with `_`). Text is escaped
 * (`&`, `<`, `>`, quotes, and a carriage return as `&#13;`, which XML parsers would otherwise read as a line
 * feed) and characters XML 1.0 cannot carry are replaced with U+FFFD.
 *
 * @module
 */

import { XMLBuilder } from "fast-xml-parser";

const builder = new XMLBuilder({
  format: false,
  ignoreAttributes: true,
  processEntities: false, // text() escapes, so that a carriage return survives parsing
  suppressEmptyNode: false,
});

const DECLARATION = '<?xml version="1.0" encoding="UTF-8"?>';
const SIMPLE_NAME = /^[A-Za-z_][A-Za-z0-9_.-]*$/;
const NAME_CHAR =
  /[^A-Za-z0-9_.\-\u00B7\u00C0-\u00D6\u00D8-\u00F6\u00F8-\u037D\u037F-\u1FFF\u200C\u200D\u203F\u2040\u2070-\u218F\u2C00-\u2FEF\u3001-\uD7FF\uF900-\uFDCF\uFDF0-\uFFFD]/g;
const BAD_START = /^[0-9.\-\u00B7\u0300-\u036F\u203F\u2040]/;
const NOT_XML_CHAR = /[^\t\n\r\u0020-\uD7FF\uE000-\uFFFD\u{10000}-\u{10FFFF}]/gu;

/**
 * Turns a JSON key into a valid XML element name.
 *
 * @param key The key.
 * @returns The element name.
 */
export function xmlName(key: string): string {
  if (SIMPLE_NAME.test(key) && !/^xml/i.test(key)) return key;
  let name = key.replace(NAME_CHAR, "_");
  if (name === "" || BAD_START.test(name) || /^xml/i.test(name)) name = `_${name}`;
  return name;
}

const ESCAPES: Record<string, string> = {
  "&": "&amp;",
  "<": "&lt;",
  ">": "&gt;",
  '"': "&quot;",
  "'": "&apos;",
  "\r": "&#13;",
};

function text(value: string): string {
  return value.replace(NOT_XML_CHAR, "\uFFFD").replace(/[&<>"'\r]/g, (c) => ESCAPES[c]);
}

function convert(value: unknown): unknown {
  if (value === null) return "";
  if (typeof value === "string") return text(value);
  if (typeof value !== "object") return String(value);
  if (Array.isArray(value)) return { item: value.map(convert) };
  const out: Record<string, unknown> = {};
  for (const key of Object.keys(value)) {
    const name = xmlName(key);
    const converted = convert((value as Record<string, unknown>)[key]);
    if (!Object.hasOwn(out, name)) out[name] = converted;
    else if (Array.isArray(out[name])) (out[name] as unknown[]).push(converted);
    else out[name] = [out[name], converted];
  }
  return out;
}

/**
 * Writes a JSON value (already normalised by `JSON.parse(JSON.stringify(v))`) as an XML document
 * whose document element is `root`.
 *
 * @param value The value.
 * @returns The XML document, starting with the XML declaration.
 */
export function toXml(value: unknown): string {
  return DECLARATION + builder.build({ root: convert(value) });
}
