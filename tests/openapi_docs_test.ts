/**
 * The documentation page in headless Chromium: the example app's routes behind
 * `api({ openapi: { docs: "/docs" } })` on a real socket. The page loads with nothing but
 * same-origin assets and no policy violation, lists every operation of the document, and
 * "Try it out" reaches the API. A screenshot is written to a temporary folder.
 */

import assert from "node:assert/strict";
import { api, application, http, type Plugin } from "@fw/application";
import { createLogger } from "@fw/runtime";
import { Browser } from "./_cdp_browser.ts";

const EXAMPLE = new URL("../examples/app/src/main.ts", import.meta.url);

/** Records what reached the server (a middleware in front of every route). */
function recorder(seen: string[]): Plugin {
  return {
    name: "recorder",
    setup(ctx) {
      ctx.addMiddleware((req, _info, next) => {
        seen.push(`${req.method} ${new URL(req.url).pathname}`);
        return next();
      });
    },
  };
}

/** Runs before the page's own scripts: records policy violations and uncaught errors. */
const WATCH = `
  globalThis.fwWatch = { violations: [], errors: [] };
  document.addEventListener("securitypolicyviolation", (e) =>
    fwWatch.violations.push(e.violatedDirective + " " + e.blockedURI));
  addEventListener("error", (e) => fwWatch.errors.push(String(e.message)));
`;

const OP = "#operations-users-getUsersById";

Deno.test({
  name: "the docs page in headless chromium lists the operations and Try it out reaches the API",
  async fn() {
    const seen: string[] = [];
    const app = application({ root: EXAMPLE, logger: createLogger({ level: "silent" }) })
      .use(recorder(seen))
      .use(http({ port: 0, hostname: "127.0.0.1", signals: false }))
      .use(api({ openapi: { title: "fw example app", version: "1.0.0", docs: "/docs" } }));
    await app.start();
    const url = app.address!.url;
    const browser = await Browser.launch();
    try {
      const page = await browser.open(`${url}/docs`, WATCH);
      await page.waitFor("document.querySelectorAll('.opblock').length >= 10", "the operations");
      const listed = await page.evaluate<string[]>(`[...document.querySelectorAll(".opblock")]
        .map((o) => o.querySelector(".opblock-summary-method").textContent + " " +
          o.querySelector(".opblock-summary-path").dataset.path).sort()`);
      const doc = await (await fetch(`${url}/openapi.json`)).json();
      const documented = Object.entries(doc.paths as Record<string, object>)
        .flatMap(([path, item]) => Object.keys(item).map((m) => `${m.toUpperCase()} ${path}`))
        .sort();
      assert.deepEqual(listed, documented);
      assert.ok(listed.includes("GET /users/{id}") && listed.length >= 10, listed.join(", "));
      assert.match(
        await page.evaluate<string>("document.querySelector('.info .title').textContent"),
        /^fw example app\s*1\.0\.0\s*OAS 3\.0$/,
      );

      await page.evaluate(`document.querySelector("${OP} .opblock-summary-control").click()`);
      await page.waitFor(`!!document.querySelector("${OP} .try-out__btn")`, "Try it out");
      await page.evaluate(`document.querySelector("${OP} .try-out__btn").click()`);
      await page.waitFor(
        `!!document.querySelector('${OP} tr[data-param-name="id"] input:not([disabled])')`,
        "the id input",
      );
      await page.evaluate(`document.querySelector('${OP} tr[data-param-name="id"] input').focus()`);
      await page.connection.send("Input.insertText", { text: "1" }, page.sessionId);
      // Swagger UI debounces the input: wait until its store holds the value, then execute.
      await page.waitFor(
        `ui.specSelectors.parameterValues(["/users/{id}", "get"]).toJS()["path.id"] === "1"`,
        "Swagger UI to take the id",
      );
      await page.evaluate(`document.querySelector("${OP} button.execute").click()`);
      await page.waitFor(
        `!!document.querySelector("${OP} .live-responses-table .response-col_status")`,
        "the live response",
      );
      const live = await page.evaluate<string>(
        `document.querySelector("${OP} .live-responses-table").textContent`,
      );
      assert.match(live, /200/);
      assert.match(live, /"name": "Ada"/);
      assert.ok(seen.includes("GET /users/1"), seen.join(", "));
      assert.match(
        await page.evaluate<string>(`document.querySelector("${OP} .request-url pre").textContent`),
        new RegExp(`^${url}/users/1$`),
      );

      const resources = await page.evaluate<string[]>(
        "performance.getEntriesByType('resource').map((e) => e.name)",
      );
      assert.ok(resources.length >= 4, resources.join("\n"));
      assert.deepEqual(resources.filter((r) => !r.startsWith(`${url}/`)), [], "no CDN");
      assert.deepEqual(await page.evaluate("fwWatch"), { violations: [], errors: [] });

      await page.evaluate(`document.querySelector("${OP} .live-responses-table").scrollIntoView()`);
      const png = await page.screenshot();
      assert.deepEqual([...png.slice(1, 4)], [0x50, 0x4e, 0x47], "a PNG screenshot");
      await Deno.writeFile(`${await Deno.makeTempDir({ prefix: "fw-docs-" })}/docs.png`, png);
    } finally {
      await browser.close();
      await app.stop();
    }
  },
});
