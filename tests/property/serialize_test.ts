import assert from "node:assert/strict";
import { CORE_SCHEMA, load } from "js-yaml";
import { toXml, xmlName } from "../../application/serialize/_xml.ts";
import { toYaml } from "../../application/serialize/_yaml.ts";
import { check, fc } from "./_property.ts";

/** JSON values with awkward strings: markup, entities, line breaks, YAML indicators, unicode. */
const awkward = fc.oneof(
  fc.string({ maxLength: 12 }),
  fc.string({ unit: "grapheme", maxLength: 6 }),
  fc.constantFrom("<a>", "&amp;", "]]>", "a\r\nb", "\r", "x\ty", " lead", "trail ", "- x", "? y"),
  fc.constantFrom("yes", "no", "null", "~", "0x1f", "1e3", "12", "true", "#c", "&anchor", "*ref"),
  fc.constantFrom(
    "key: value",
    "'q'",
    '"dq"',
    "{a}",
    "[b]",
    "|",
    ">",
    "!tag",
    "%x",
    "@y",
    "\u2028",
  ),
);
const key = fc.oneof(
  awkward,
  fc.constantFrom("a", "item", "root", "__proto__", "<<", "1", "xmlns"),
);
const json = fc.letrec<{ value: unknown }>((tie) => ({
  value: fc.oneof(
    { depthSize: "small" },
    awkward,
    fc.integer(),
    fc.double({ noNaN: true, noDefaultInfinity: true }),
    fc.boolean(),
    fc.constant(null),
    fc.array(tie("value"), { maxLength: 4 }),
    fc.dictionary(key, tie("value"), { maxKeys: 4 }),
  ),
})).value.map((v) => JSON.parse(JSON.stringify(v)));

Deno.test("toYaml() output parses back (an independent YAML 1.2 parser) equal to the input", () => {
  check(fc.property(json, (value) => {
    const text = toYaml(value);
    assert.deepEqual(load(text, { schema: CORE_SCHEMA }), value, text);
  }));
});

// ------------------------------------------------------------------------------ XML

type Tree = string | [string, Tree[]][];

/** The XML view of a JSON value: text, or child elements grouped by name in first-seen order. */
function expected(value: unknown): Tree {
  if (value === null) return "";
  if (typeof value === "string") {
    return value.replace(/[^\t\n\r\u0020-\uD7FF\uE000-\uFFFD\u{10000}-\u{10FFFF}]/gu, "\uFFFD");
  }
  if (typeof value !== "object") return String(value);
  const pairs: [string, Tree][] = Array.isArray(value)
    ? value.map((v) => ["item", expected(v)])
    : Object.entries(value as Record<string, unknown>).map(([k, v]) => [xmlName(k), expected(v)]);
  return group(pairs);
}

function group(pairs: [string, Tree][]): Tree {
  if (pairs.length === 0) return "";
  const out = new Map<string, Tree[]>();
  for (const [name, tree] of pairs) {
    if (!out.has(name)) out.set(name, []);
    out.get(name)!.push(tree);
  }
  return [...out];
}

const ENTITIES: Record<string, string> = { amp: "&", lt: "<", gt: ">", quot: '"', apos: "'" };

/**
 * A small XML parser for what `toXml()` may write (a declaration, elements without attributes,
 * text, entity and character references), applying XML 1.0 end-of-line handling: a literal CR
 * or CRLF is read as LF, as every conforming parser does.
 */
function parseXml(text: string): Tree {
  let i = 0;
  const fail = (why: string): never => {
    throw new Error(`${why} at ${i}: ${JSON.stringify(text.slice(i, i + 30))}`);
  };
  text = text.replace(/\r\n?/g, "\n");
  if (text.startsWith("<?xml")) i = text.indexOf("?>") + 2;
  const element = (): [string, Tree] => {
    const open = /^<([^\s/>]+)(\s*)(\/?)>/.exec(text.slice(i)) ?? fail("expected a start tag");
    i += open[0].length;
    const name = open[1];
    if (open[3] === "/") return [name, ""];
    let body = "";
    const children: [string, Tree][] = [];
    for (;;) {
      if (text.startsWith("</", i)) {
        const close = `</${name}>`;
        if (!text.startsWith(close, i)) fail(`expected ${close}`);
        i += close.length;
        break;
      }
      if (text[i] === "<") children.push(element());
      else if (text[i] === "&") {
        const end = text.indexOf(";", i);
        const ref = text.slice(i + 1, end);
        body += ref.startsWith("#x")
          ? String.fromCodePoint(parseInt(ref.slice(2), 16))
          : ref.startsWith("#")
          ? String.fromCodePoint(Number(ref.slice(1)))
          : ENTITIES[ref] ?? fail(`unknown entity &${ref};`);
        i = end + 1;
      } else if (i >= text.length) fail("unexpected end");
      else body += text[i++];
    }
    if (children.length && body.trim() !== "") fail("mixed content");
    return [name, children.length ? group(children) : body];
  };
  const [name, tree] = element();
  assert.equal(name, "root");
  if (i !== text.length) fail("trailing content");
  return tree;
}

Deno.test("toXml() output parses back equal to the input under the documented mapping", () => {
  check(fc.property(json, (value) => {
    const xml = toXml(value);
    assert.deepEqual(parseXml(xml), expected(value), xml);
  }));
});
