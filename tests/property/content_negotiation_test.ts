import assert from "node:assert/strict";
import { MEDIA_TYPES, negotiate } from "@fw/application/content-negotiation";
import { check, fc } from "./_property.ts";

const RANGES = [
  "application/json",
  "text/html",
  "text/*",
  "*/*",
  "*",
  "application/*",
  "application/xml",
  "text/plain",
  "text/xml",
  "text/yaml",
  "application/yaml",
  "image/png",
  "TEXT/HTML",
  "Application/JSON",
  "text",
  "*/json",
  "",
];
const VALID_Q = ["0", "0.5", "1", "0.001", "1.000", "0.25", "0.", "1."];
const INVALID_Q = ["2", "0.0001", "-1", "abc", "1.5", "", "1.001"];

interface Entry {
  range: string;
  q?: string;
  params: string[];
  ws: [string, string];
}

const full: fc.Arbitrary<Entry> = fc.record({
  range: fc.constantFrom(...RANGES),
  q: fc.option(fc.constantFrom(...VALID_Q, ...INVALID_Q), { nil: undefined }),
  params: fc.array(fc.constantFrom("level=1", "charset=utf-8"), { maxLength: 2 }),
  ws: fc.tuple(fc.constantFrom("", " ", "\t"), fc.constantFrom("", " ")),
});

/** Empty list elements (`Accept: ,`), which RFC 9110 lists allow and recipients must skip. */
const blank: fc.Arbitrary<Entry> = fc.constantFrom("", " ").map((ws) => ({
  range: "",
  params: [],
  ws: [ws, ""],
}));
const entry = fc.oneof({ arbitrary: full, weight: 4 }, { arbitrary: blank, weight: 1 });

function render(e: Entry): string {
  const params = [...e.params, ...(e.q === undefined ? [] : [`q=${e.q}`])];
  return e.ws[0] + [e.range, ...params].join(";") + e.ws[1];
}

/** RFC 9110 section 12.5.1, from the generated entries rather than from the header text. */
function reference(entries: Entry[]): string | undefined {
  const valid: { type: string; subtype: string; q: number; index: number }[] = [];
  for (const e of entries) {
    let range = e.range.toLowerCase();
    if (range === "*") range = "*/*";
    const [type, subtype] = range.split("/");
    if (!type || !subtype || (type === "*" && subtype !== "*")) continue;
    if (e.q !== undefined && !VALID_Q.includes(e.q)) continue;
    valid.push({ type, subtype, q: e.q === undefined ? 1 : Number(e.q), index: valid.length });
  }
  if (valid.length === 0) return entries.every((e) => render(e).trim() === "") ? "json" : undefined;
  const ranked = MEDIA_TYPES.map((media, order) => {
    const [type, subtype] = media.type.split("/");
    // the most specific range that matches decides the quality (the first one listed, on a tie)
    const matching = valid
      .map((v) => ({
        v,
        spec: v.type === "*"
          ? 0
          : v.type !== type
          ? -1
          : v.subtype === "*"
          ? 1
          : v.subtype === subtype
          ? 2
          : -1,
      }))
      .filter((m) => m.spec >= 0)
      .sort((a, b) => b.spec - a.spec || a.v.index - b.v.index);
    const top = matching[0];
    return { media, order, q: top?.v.q ?? 0, spec: top?.spec ?? -1, index: top?.v.index ?? 0 };
  }).filter((r) => r.q > 0);
  ranked.sort((a, b) => b.q - a.q || b.spec - a.spec || a.index - b.index || a.order - b.order);
  return ranked[0]?.media.type;
}

Deno.test("negotiate() picks what RFC 9110 rules pick for generated Accept headers", () => {
  check(fc.property(fc.array(entry, { maxLength: 6 }), (entries) => {
    const header = entries.map(render).join(",");
    const expected = reference(entries);
    const got = negotiate(header);
    const gotType = got === undefined
      ? undefined
      : got.format === "json" && expected === "json"
      ? "json"
      : got.type;
    assert.equal(gotType, expected, `Accept: ${JSON.stringify(header)}`);
  }));
});

Deno.test("negotiate() never throws and returns a known type for any header text", () => {
  check(fc.property(fc.string({ maxLength: 200 }), (header) => {
    const got = negotiate(header);
    assert.ok(got === undefined || MEDIA_TYPES.includes(got));
  }));
});
