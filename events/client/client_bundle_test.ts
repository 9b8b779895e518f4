import assert from "node:assert/strict";

const ROOT = new URL("../../", import.meta.url);
const ENTRY = new URL("events/client.ts", ROOT).pathname;

/** The only modules `@fw/events/client` may load: its own folder and browser-safe protocol files. */
const ALLOWED = [
  "events/client.ts",
  "events/client/_payload_check.ts",
  "events/client/client_types.ts",
  "events/client/compatible.ts",
  "events/client/errors.ts",
  "events/client/event_client.ts",
  "events/client/subscription.ts",
  "events/protocol/_json_schema.ts",
  "events/protocol/frames.ts",
];

Deno.test("@fw/events/client imports only its own folder and browser-safe protocol modules", async () => {
  const { stdout, code } = await new Deno.Command(Deno.execPath(), {
    args: ["info", "--json", ENTRY],
    stdout: "piped",
    stderr: "null",
  }).output();
  assert.equal(code, 0);
  const info = JSON.parse(new TextDecoder().decode(stdout)) as {
    modules: { specifier: string; local?: string }[];
  };
  const modules = info.modules.map((m) => m.specifier.replace(ROOT.href, "")).sort();
  assert.deepEqual(modules, ALLOWED, "no server transport, no runtime, no npm package");
  for (const m of info.modules) {
    const text = await Deno.readTextFile(new URL(m.specifier));
    assert.doesNotMatch(text, /\bDeno\./, `${m.specifier} uses Deno.*`);
  }
});

Deno.test("@fw/events/client bundles for the browser; the bundle exports the client", async () => {
  const dir = await Deno.makeTempDir({ prefix: "fw-client-bundle-" });
  try {
    const out = `${dir}/event_client.js`;
    const { code, stderr } = await new Deno.Command(Deno.execPath(), {
      args: ["bundle", "--quiet", "--platform=browser", "--minify", ENTRY, "-o", out],
      stdout: "null",
      stderr: "piped",
    }).output();
    assert.equal(code, 0, new TextDecoder().decode(stderr));
    const js = await Deno.readTextFile(out);
    const gzip = new Uint8Array(
      await new Response(
        new Blob([js]).stream().pipeThrough(new CompressionStream("gzip")),
      ).arrayBuffer(),
    );
    console.log(
      `@fw/events/client browser bundle: ${js.length} bytes minified, ${gzip.length} bytes gzip`,
    );
    assert.ok(js.length < 30_000, `bundle too large: ${js.length} bytes`);
    const mod = await import(`data:text/javascript;base64,${btoa(js)}`);
    assert.equal(typeof mod.eventClient, "function");
    assert.equal(typeof mod.isCompatibleEventServer, "function");
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});
