/**
 * Bundles `@fw/events/client` for the browser when the live example starts (`deno bundle
 * --platform=browser --minify`, which fetches esbuild from npm once), so the user has no build
 * step and the page always runs the client of this checkout.
 *
 * @module
 */

const ENTRY = new URL("../../../events/client.ts", import.meta.url);

/**
 * Bundles the client and returns the JavaScript module.
 *
 * @returns The bundle's text.
 * @throws {Error} When `deno bundle` fails (its output is in the message).
 */
export async function bundleClient(): Promise<string> {
  const dir = await Deno.makeTempDir({ prefix: "fw-live-" });
  try {
    const out = `${dir}/event_client.js`;
    const { code, stderr } = await new Deno.Command(Deno.execPath(), {
      args: ["bundle", "--quiet", "--platform=browser", "--minify", ENTRY.pathname, "-o", out],
      stdout: "null",
      stderr: "piped",
    }).output();
    if (code !== 0) {
      throw new Error(`Cannot bundle @fw/events/client: ${new TextDecoder().decode(stderr)}`);
    }
    return await Deno.readTextFile(out);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
}
