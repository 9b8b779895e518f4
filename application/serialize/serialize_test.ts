import assert from "node:assert/strict";
import { escapeHtml, serialize, toHtml } from "./serialize.ts";
import { toXml, xmlName } from "./_xml.ts";
import { toYaml } from "./_yaml.ts";

const DECL = '<?xml version="1.0" encoding="UTF-8"?>';

Deno.test("serialize() writes compact JSON", () => {
  assert.equal(serialize({ a: [1, "x"], b: undefined }, "json"), '{"a":[1,"x"]}');
});

Deno.test("serialize() normalises values like JSON for other formats", async () => {
  const date = new Date("2026-01-02T03:04:05.000Z");
  assert.equal(
    await serialize({ at: date, gone: undefined, n: NaN }, "yaml"),
    "at: 2026-01-02T03:04:05.000Z\nn: null\n",
  );
});

Deno.test("toYaml() quotes strings YAML would misread", () => {
  assert.equal(toYaml({ a: "true", b: "1", c: "x: y" }), 'a: "true"\nb: "1"\nc: "x: y"\n');
});

Deno.test("toXml() wraps the value in root with keys as elements and arrays as item", () => {
  assert.equal(
    toXml({ user: { name: "Ada", tags: ["a", "b"] }, n: 1, ok: true, none: null, empty: [] }),
    DECL +
      "<root><user><name>Ada</name><tags><item>a</item><item>b</item></tags></user>" +
      "<n>1</n><ok>true</ok><none></none><empty></empty></root>",
  );
});

Deno.test("toXml() writes a top-level array as items and nested arrays as nested items", () => {
  assert.equal(
    toXml([[1, 2], { k: "v" }]),
    DECL + "<root><item><item>1</item><item>2</item></item><item><k>v</k></item></root>",
  );
});

Deno.test("toXml() escapes text and drops characters XML cannot carry", () => {
  assert.equal(
    toXml({ t: `<a href="x">&'</a>\u0000\u0007ok` }),
    DECL + "<root><t>&lt;a href=&quot;x&quot;&gt;&amp;&apos;&lt;/a&gt;\uFFFD\uFFFDok</t></root>",
  );
});

Deno.test("xmlName() sanitises names that are not valid XML names", () => {
  assert.equal(xmlName("name"), "name");
  assert.equal(xmlName("first name"), "first_name");
  assert.equal(xmlName("1st"), "_1st");
  assert.equal(xmlName(""), "_");
  assert.equal(xmlName("a<b>"), "a_b_");
  assert.equal(xmlName("xmlns"), "_xmlns");
  assert.equal(xmlName("@_attr"), "__attr");
  assert.equal(xmlName("#text"), "_text");
  assert.equal(xmlName("ns:tag"), "ns_tag");
  assert.equal(xmlName("café"), "café");
});

Deno.test("toXml() keeps both values when two keys sanitise to the same name", () => {
  assert.equal(
    toXml({ "a b": 1, "a-b": 2, "a_b": 3 }),
    DECL + "<root><a_b>1</a_b><a_b>3</a_b><a-b>2</a-b></root>",
  );
});

Deno.test("toHtml() wraps escaped, indented JSON in a minimal page", () => {
  const page = toHtml({ html: "<script>alert('x')</script>" });
  assert.match(
    page,
    /^<!DOCTYPE html>\n<html><head><meta charset="utf-8"><title>Response<\/title>/,
  );
  assert.ok(
    page.includes(
      "<pre>{\n  &quot;html&quot;: &quot;&lt;script&gt;alert(&#39;x&#39;)&lt;/script&gt;&quot;\n}</pre>",
    ),
  );
  assert.ok(!page.includes("<script>"));
});

Deno.test("escapeHtml() escapes the five special characters", () => {
  assert.equal(escapeHtml(`&<>"'`), "&amp;&lt;&gt;&quot;&#39;");
});

Deno.test("serialize() writes YAML and XML through a promise first, synchronously afterwards", async () => {
  const value = { name: "Ada", tags: ["a"] };
  const yaml = serialize(value, "yaml");
  const xml = serialize(value, "xml");
  assert.equal(await yaml, "name: Ada\ntags:\n  - a\n");
  assert.equal(await xml, `${DECL}<root><name>Ada</name><tags><item>a</item></tags></root>`);
  assert.equal(serialize(value, "yaml"), "name: Ada\ntags:\n  - a\n");
  assert.equal(
    serialize(value, "xml"),
    `${DECL}<root><name>Ada</name><tags><item>a</item></tags></root>`,
  );
  assert.equal(serialize(value, "html"), toHtml(value));
});
