import assert from "node:assert/strict";
import manifest from "./manifest.json" with { type: "json" };
import {
  checkServerFrame,
  parseClientFrame,
  PROTOCOL_SCHEMAS,
  type ProtocolSchemaName,
  validateProtocolValue,
} from "./schemas.ts";

interface Fixture {
  schema: ProtocolSchemaName;
  description: string;
  frame?: unknown;
  text?: string;
  schemaValid?: boolean;
  error?: string;
}

const dir = new URL("./fixtures/", import.meta.url);

async function fixtures(kind: "valid" | "invalid"): Promise<[string, Fixture][]> {
  const out: [string, Fixture][] = [];
  for await (const e of Deno.readDir(new URL(`${kind}/`, dir))) {
    if (e.name.endsWith(".json")) {
      out.push([e.name, JSON.parse(await Deno.readTextFile(new URL(`${kind}/${e.name}`, dir)))]);
    }
  }
  return out.sort(([a], [b]) => a.localeCompare(b));
}

Deno.test("PROTOCOL_SCHEMAS holds every file of schemas/ under its file name", async () => {
  const files: string[] = [];
  for await (const e of Deno.readDir(new URL("./schemas/", import.meta.url))) {
    files.push(e.name.replace(/\.json$/, ""));
  }
  assert.deepEqual(files.sort(), Object.keys(PROTOCOL_SCHEMAS).sort());
  for (const [name, schema] of Object.entries(PROTOCOL_SCHEMAS)) {
    assert.equal(schema.$id, `https://fw.dev/schemas/fw.events.v1/${name}.json`, name);
  }
});

Deno.test("validateProtocolValue() accepts every valid fixture", async () => {
  const all = await fixtures("valid");
  assert.ok(all.length >= 20);
  for (const [name, f] of all) {
    assert.deepEqual(validateProtocolValue(f.schema, f.frame), [], name);
    if (["hello", "subscribe", "unsubscribe", "ping", "pong"].includes(f.schema)) {
      assert.equal(parseClientFrame(JSON.stringify(f.frame)).ok, true, name);
    }
    if (["welcome", "subscribed", "unsubscribed", "event", "gap", "error"].includes(f.schema)) {
      assert.deepEqual(checkServerFrame(f.frame), [], name);
    }
  }
});

Deno.test("validateProtocolValue() refuses every invalid fixture that is marked schema-invalid", async () => {
  for (const [name, f] of await fixtures("invalid")) {
    if (f.text !== undefined) continue;
    const issues = validateProtocolValue(f.schema, f.frame);
    assert.equal(issues.length === 0, f.schemaValid === true, `${name}: ${JSON.stringify(issues)}`);
  }
});

Deno.test("parseClientFrame() gives each invalid client fixture its error code", async () => {
  const semantic = new Set(["unknown_topic", "unknown_subscription", "unknown_cursor"]);
  for (const [name, f] of await fixtures("invalid")) {
    if (f.error === undefined) continue;
    const parsed = parseClientFrame(f.text ?? JSON.stringify(f.frame));
    if (semantic.has(f.error)) assert.equal(parsed.ok, true, name);
    else assert.equal(parsed.ok ? "ok" : parsed.code, f.error, name);
  }
});

Deno.test("manifest.json refers to every invalid client fixture, and only to fixtures that exist", async () => {
  const invalid = new Map(await fixtures("invalid"));
  const text = JSON.stringify(manifest);
  const referenced = new Set(
    [...text.matchAll(/"(invalid|valid)\/([\w-]+\.json)"/g)].map((m) => m[2]),
  );
  for (const name of referenced) assert.ok(invalid.has(name), `missing fixture ${name}`);
  for (const [name, f] of invalid) {
    if (f.error !== undefined) {
      assert.ok(referenced.has(name), `fixture ${name} is not in the manifest`);
    }
  }
  const ids = manifest.steps.map((s) => s.id);
  assert.equal(new Set(ids).size, ids.length, "step ids are unique");
});

Deno.test("checkServerFrame() names the frame and the field", () => {
  assert.deepEqual(checkServerFrame({ type: "event", sub: "a", topic: "t", payload: 1 }), [
    'frame "event": id is required',
  ]);
  assert.deepEqual(checkServerFrame({ type: "subscribe" }), [
    'frame "subscribe": not a server frame type',
  ]);
});

Deno.test("parseClientFrame() echoes only a valid subscription id", () => {
  const bad = parseClientFrame('{"type":"subscribe","sub":"a b","topic":"x"}');
  assert.equal(bad.ok, false);
  assert.equal(!bad.ok && bad.sub, undefined);
  const unknown = parseClientFrame('{"type":"subscribe","sub":"ok","topic":1}');
  assert.equal(!unknown.ok && unknown.sub, "ok");
  assert.match(
    !unknown.ok ? unknown.message : "",
    /Invalid "subscribe" frame: topic must be a string/,
  );
});
