/**
 * How an fw envelope travels on a managed pub/sub: the body is the envelope as JSON (UTF-8), and
 * the attributes are the envelope's own attributes (so the engine can filter on them) plus
 * `fw.envelope: "1"` and `fw.id`. A message without `fw.envelope`, or whose body is not JSON, was
 * not published by fw.
 *
 * @module
 */

import type { Envelope } from "../../envelope.ts";

/** The attribute that marks a message published by fw (value `"1"`). */
export const FW_MARK = "fw.envelope";
/** The attribute carrying the envelope id. */
export const FW_ID = "fw.id";

const encoder = new TextEncoder();
// The lenient decoder is Deno's fast path; the strict one only confirms a body that came out
// with a replacement character (U+FFFD): invalid UTF-8, or text that holds one.
const decoder = new TextDecoder();
const strictDecoder = new TextDecoder("utf-8", { fatal: true });

/** Body and attributes of an envelope. */
export function encodeEnvelope(
  envelope: Envelope,
): { data: Uint8Array; attributes: Record<string, string> } {
  return {
    data: encoder.encode(JSON.stringify(envelope)),
    attributes: { ...envelope.attributes, [FW_MARK]: "1", [FW_ID]: envelope.id },
  };
}

/** A decoded message: the envelope candidate, or why the message is not one of fw's. */
export type Decoded = { ok: true; envelope: unknown } | { ok: false; reason: string };

/** Reads an envelope back from a message's body and attributes. */
export function decodeEnvelope(
  data: Uint8Array,
  attributes: Readonly<Record<string, string>> | undefined,
): Decoded {
  return decodeMarked(data, attributes?.[FW_MARK]);
}

/** Reads an envelope back from a message's body and the value of its `fw.envelope` attribute. */
export function decodeMarked(data: Uint8Array, mark: string | undefined): Decoded {
  if (mark !== "1") {
    return { ok: false, reason: `foreign message: no fw attributes ("${FW_MARK}" is missing)` };
  }
  let text = decoder.decode(data);
  if (text.includes("\uFFFD")) {
    try {
      text = strictDecoder.decode(data);
    } catch {
      return { ok: false, reason: "malformed message body: not UTF-8 text" };
    }
  }
  try {
    return { ok: true, envelope: JSON.parse(text) };
  } catch (err) {
    return {
      ok: false,
      reason: `malformed message body: not JSON (${(err as Error).message})`,
    };
  }
}

/** Whether a value is a map of strings (attributes must be, to travel as message attributes). */
export function isStringMap(value: unknown): value is Record<string, string> {
  if (typeof value !== "object" || value === null || Array.isArray(value)) return false;
  for (const k in value) {
    if (typeof (value as Record<string, unknown>)[k] !== "string") return false;
  }
  return true;
}
