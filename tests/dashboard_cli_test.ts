/**
 * `cli dlq list|redrive|discard --url <app>` against a running application with the dashboard:
 * the real command line in a subprocess redrives 1200 dead letters page by page with a progress
 * line; list, discard (which needs --yes) and the token errors through the same code in-process.
 */

import assert from "node:assert/strict";
import { application, http } from "@fw/application";
import { oauth } from "@fw/application/oauth";
import { dashboard } from "@fw/dashboard";
import { events, getPublisher, handler, Int, topic } from "@fw/events";
import { createLogger } from "@fw/runtime";
import { dlq, type DlqIo } from "../application/_dlq_cli.ts";
import { signJwt } from "../application/testdata/jwt.ts";

const Job = topic("cli.job", { n: Int });
const SECRET = "cli-test-secret-0123456789abcdef-xyz";
const N = 1200;

function capture(env: Record<string, string> = {}) {
  const out: string[] = [], err: string[] = [], progress: string[] = [];
  const io: DlqIo = {
    env: (name) => env[name],
    out: (l) => void out.push(l),
    err: (l) => void err.push(l),
    progress: (t) => void progress.push(t),
  };
  return { io, out, err, progress };
}

Deno.test("cli dlq: list, discard with --yes, redrive of 1200 with a progress line, token errors", async () => {
  const state = { failing: true, handled: 0 };
  const app = application({ logger: createLogger({ level: "silent" }) })
    .use(http({ port: 0, hostname: "127.0.0.1", signals: false }))
    .use(oauth({ issuer: "ops", audience: "ops", secret: SECRET }))
    .use(dashboard({ secure: { roles: ["admin"] } }))
    .use(events({
      autoScan: false,
      brokerPort: false,
      deadLetterLimit: 5000,
      handlers: [
        handler(Job).options({ maxRetries: 0 }).handle(() => {
          if (state.failing) throw new Error("worker down");
          state.handled++;
        }),
      ],
    }));
  await app.start();
  try {
    const url = app.address!.url;
    const now = Math.floor(Date.now() / 1000);
    const token = await signJwt(
      { iss: "ops", aud: "ops", sub: "cli", roles: ["admin"], iat: now, exp: now + 600 },
      { alg: "HS256", secret: SECRET },
    );
    const publish = getPublisher(Job);
    for (let n = 0; n < N + 2; n++) await publish({ n });

    const none = capture();
    assert.equal(await dlq(["list", "--url", url], none.io), 2);
    assert.match(none.err[0], /answered 401: set FW_DASHBOARD_TOKEN/);

    const list = capture({ FW_DASHBOARD_TOKEN: token });
    assert.equal(await dlq(["list", "--url", url, "--limit", "3"], list.io), 0);
    assert.equal(list.out.length, 4);
    assert.match(list.out[0], /cli\.job {2}memory {2}attempts=1 .* worker down$/);
    assert.equal(list.out[3], `3 of ${N + 2} dead letters`);

    const refused = capture({ FW_DASHBOARD_TOKEN: token });
    assert.equal(await dlq(["discard", "--url", url, "--all"], refused.io), 2);
    assert.match(refused.err[0], /add "--yes" to confirm/);
    const ids = list.out.slice(0, 2).map((l) => l.split(" ")[0]).join(",");
    const discarded = capture({ FW_DASHBOARD_TOKEN: token });
    assert.equal(await dlq(["discard", "--url", url, "--ids", ids, "--yes"], discarded.io), 0);
    assert.deepEqual(discarded.out, ["2 dead letters discarded"]);

    state.failing = false;
    const cli = await new Deno.Command(Deno.execPath(), {
      args: [
        "run",
        "-A",
        "application/cli.ts",
        "dlq",
        "redrive",
        "--url",
        url,
        "--topic",
        "cli.job",
      ],
      env: { FW_DASHBOARD_TOKEN: token },
      cwd: new URL("..", import.meta.url),
      stdout: "piped",
      stderr: "piped",
    }).output();
    const stdout = new TextDecoder().decode(cli.stdout);
    const stderr = new TextDecoder().decode(cli.stderr);
    assert.equal(cli.code, 0, stderr);
    assert.equal(stdout, `${N} dead letters redriven\n`);
    assert.deepEqual(stderr.split("\r").filter(Boolean), [
      `redriven 500 of ${N}`,
      `redriven 1000 of ${N}`,
      `redriven ${N} of ${N}`,
    ]);
    assert.equal(state.handled, N);
  } finally {
    await app.stop();
  }
});
