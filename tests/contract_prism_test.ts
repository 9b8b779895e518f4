/**
 * The shop's own tests (tests/shop_example_test.ts) run through Stoplight Prism as a validating
 * proxy built from the shop's live OpenAPI document: no response may violate the document, and
 * no request may violate it unless fw refused it too (400, 401, 403, 406, 413, 415). The live
 * feed (an endless Server-Sent Events stream, which Prism would buffer to validate it) and the
 * two routes that are not API operations (`/` and `/openapi.json`) go to the shop directly.
 */

import assert from "node:assert/strict";
import { ensureTools, freePort, startExample, startPrism } from "./contract/_tools.ts";

interface Line {
  method: string;
  path: string;
  status: number;
  violations: { location: string[]; message: string }[];
}

Deno.test("contract: the shop's tests pass through Prism with no violation of its document", async () => {
  await ensureTools();
  const dir = await Deno.makeTempDir({ prefix: "fw-prism-" });
  try {
    const shop = await startExample("examples/shop/src/main.ts", {
      SHOP_JWT_SECRET: "contract-test-secret-0123456789abcdef",
      SHOP_KV_PATH: ":memory:",
    });
    try {
      const document = await (await fetch(`${shop.url}/openapi.json`)).text();
      await Deno.writeTextFile(`${dir}/openapi.json`, document);
    } finally {
      await shop.stop();
    }
    const port = freePort();
    const prism = await startPrism(`${dir}/openapi.json`, `http://127.0.0.1:${port}`);
    const log = `${dir}/requests.jsonl`;
    try {
      const out = await new Deno.Command(Deno.execPath(), {
        args: ["test", "-A", "tests/shop_example_test.ts"],
        cwd: new URL("../", import.meta.url),
        env: {
          FW_SHOP_PROXY: prism.url,
          FW_SHOP_PORT: String(port),
          FW_SHOP_PROXY_LOG: log,
          NO_COLOR: "1",
        },
        stdout: "piped",
        stderr: "piped",
      }).output();
      const text = new TextDecoder().decode(out.stdout) + new TextDecoder().decode(out.stderr);
      assert.ok(out.success, `the shop's tests failed through Prism:\n${text}`);
    } finally {
      await prism.stop();
    }
    const lines: Line[] = (await Deno.readTextFile(log)).trim().split("\n").map((l) =>
      JSON.parse(l)
    );
    assert.ok(lines.length > 40, `only ${lines.length} requests went through Prism`);
    const refused = lines.filter((l) => l.status >= 400);
    assert.ok(refused.some((l) => l.status === 400 && l.violations.length > 0));
    assert.ok(refused.some((l) => l.status === 401 && l.violations.length > 0));
    const wrong = lines.filter((l) => l.violations.some((v) => v.location[0] === "response"));
    assert.deepEqual(wrong, []);
    // a request the document refuses is one the shop refused too (the tests' deliberate mistakes)
    const accepted = lines.filter((l) => l.violations.length > 0 && l.status < 400);
    assert.deepEqual(accepted, []);
    console.log(
      `Prism: ${lines.length} requests, ${refused.length} answered 4xx/5xx, ` +
        `${lines.filter((l) => l.violations.length > 0).length} with a request violation ` +
        `(all refused by the shop too), ${wrong.length} response violations`,
    );
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});
