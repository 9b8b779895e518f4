import assert from "node:assert/strict";
import { negotiate, parseAccept } from "./content_negotiation.ts";

const type = (accept: string | null) => negotiate(accept)?.type;

Deno.test("negotiate() picks JSON for a missing, empty or wildcard Accept", () => {
  for (const accept of [null, "", "  ", "*/*", "application/*", "*", "application/json"]) {
    assert.equal(type(accept), "application/json", String(accept));
  }
});

Deno.test("negotiate() maps every row of the spec 4.2 table", () => {
  assert.deepEqual(negotiate("text/plain"), {
    type: "text/plain",
    format: "yaml",
    contentType: "text/plain;charset=UTF-8",
  });
  assert.equal(negotiate("text/html")?.format, "html");
  assert.equal(negotiate("application/xml")?.contentType, "application/xml; charset=utf-8");
  assert.equal(negotiate("text/xml")?.contentType, "application/xml; charset=utf-8");
  assert.equal(negotiate("application/yaml")?.format, "yaml");
  assert.equal(negotiate("text/yaml")?.format, "yaml");
});

Deno.test("negotiate() prefers the highest q-value", () => {
  assert.equal(type("text/html;q=0.5, application/xml;q=0.9"), "application/xml");
  assert.equal(type("application/json;q=0.1, text/plain"), "text/plain");
  assert.equal(type("text/yaml;q=1.0, application/json;q=0.999"), "text/yaml");
});

Deno.test("negotiate() breaks q ties by specificity, then Accept order", () => {
  assert.equal(type("text/*, application/json"), "application/json");
  assert.equal(type("text/html, application/json"), "text/html");
  assert.equal(type("application/json, text/html"), "application/json");
  assert.equal(
    type("text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8"),
    "text/html",
  );
});

Deno.test("negotiate() treats q=0 as not acceptable", () => {
  assert.equal(type("application/json;q=0, */*;q=0.1"), "text/plain");
  assert.equal(type("*/*;q=0"), undefined);
  assert.equal(type("application/json;q=0"), undefined);
});

Deno.test("negotiate() answers undefined (406) for unsupported or unparseable Accept values", () => {
  for (const accept of ["application/pdf", "image/*", "text/csv, application/msword", "nonsense"]) {
    assert.equal(type(accept), undefined, accept);
  }
});

Deno.test("negotiate() ignores case and media type parameters", () => {
  assert.equal(type("Text/HTML; level=1; charset=utf-8"), "text/html");
});

Deno.test("parseAccept() skips malformed entries and invalid q-values", () => {
  assert.deepEqual(parseAccept("text/html;q=2, ,*/json, application/json;q=0.5, x"), [
    { type: "application", subtype: "json", q: 0.5 },
  ]);
});
