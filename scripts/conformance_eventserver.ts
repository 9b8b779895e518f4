/**
 * `deno task conformance:eventserver [url]`: checks an Event Server against the `fw.events.v1`
 * conformance manifest (`events/protocol/manifest.json`) and prints pass or fail per step. With
 * no URL it starts fw's own server (on a free port) and checks that. Exits 1 when a step fails.
 *
 * The server under test declares `conformance.echo` (`{n: integer, text?: string}`, open to
 * everyone) and `conformance.private` (`{n: integer}`, closed to anonymous clients).
 *
 * Options: `--timeout <ms>` per expected answer (default 5000).
 *
 * @module
 */

import { runEventServerConformance } from "@fw/events/testing";
import { startConformanceApp } from "./_conformance_app.ts";

const args = [...Deno.args];
const t = args.indexOf("--timeout");
const timeoutMs = t >= 0 ? Number(args.splice(t, 2)[1]) : undefined;
let url = args[0];
const own = url === undefined ? await startConformanceApp() : undefined;
url ??= own!.url;
console.log(
  `conformance:eventserver: fw.events.v1 against ${url}${own ? " (fw's own server)" : ""}`,
);
const report = await runEventServerConformance(url, {
  ...(timeoutMs ? { timeoutMs } : {}),
  onStep: (r) =>
    console.log(
      `${r.status.toUpperCase().padEnd(4)} ${r.id.padEnd(26)} ${r.title}` +
        (r.message ? `\n     -> ${r.message}` : ""),
    ),
});
await own?.app.stop();
console.log(`\n${report.passed} passed, ${report.failed} failed, ${report.skipped} skipped`);
if (report.failed > 0) Deno.exit(1);
