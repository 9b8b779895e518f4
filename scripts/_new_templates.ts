/**
 * The files `scripts/new.ts` writes into a new project (everything but `deno.json`).
 *
 * @module
 */

/** The source files of a new project, by path relative to its folder. */
export function sourceFiles(name: string): Record<string, string> {
  return {
    "src/main.ts": `/**
 * ${name}: the application. \`deno task dev\` runs it with --watch on http://127.0.0.1:8000.
 *
 * @module
 */

import { api, type Application, application, http } from "@fw/application";
import { events } from "@fw/events";

/** Options of {@linkcode createApp}. */
export interface AppOptions {
  /** HTTP port (default \`PORT\`, else 8000; 0 picks a free one). */
  port?: number;
  /** Port of the local events broker other processes can use (false: none). */
  brokerPort?: number | false;
}

/** Builds the application: routes from \`src/api/\`, event handlers from \`src/events/\`. */
export function createApp(options: AppOptions = {}): Application {
  return application({ root: import.meta.url })
    .use(http({ port: options.port ?? Number(Deno.env.get("PORT") ?? 8000) }))
    .use(api())
    .use(events({ brokerPort: options.brokerPort }));
}

if (import.meta.main) {
  const app = createApp();
  await app.start();
  console.log(\`${name}: try curl -X POST \${app.address?.url}/greetings -d '{"name":"Ada"}' -H 'content-type: application/json'\`);
}
`,
    "src/topics.ts": `/**
 * Event topics: pure data, imported by the routes that publish and the handlers that subscribe.
 *
 * @module
 */

import { MinLength, topic } from "@fw/events";

/** Published by \`POST /greetings\`. */
export const Greeted = topic("greetings.sent", { name: MinLength(1) });
`,
    "src/greetings.ts": `/**
 * The greetings the event handler has recorded, provided through dependency injection.
 *
 * @module
 */

import { provider } from "@fw/runtime";

/** Names greeted so far (one list per application). */
export const Greetings = provider({ name: "Greetings", factory: (): string[] => [] });
`,
    "src/api/greetings/post.ts": `import { endpoint, MaxLength, MinLength } from "@fw/application";
import { getPublisher } from "@fw/events";
import { Greeted } from "../../topics.ts";

const publishGreeted = getPublisher(Greeted);

/** POST /greetings: validates the body, answers 201 and publishes \`greetings.sent\`. */
export default endpoint()
  .body({ name: MinLength(1, MaxLength(80)) })
  .returns(201, "Greeted", { message: String })
  .handle(async (ctx) => {
    const { name } = await ctx.body();
    await publishGreeted({ name });
    return { message: \`Hello, \${name}!\` };
  });
`,
    "src/events/greeted.on.ts": `import { handler } from "@fw/events";
import { Greetings } from "../greetings.ts";
import { Greeted } from "../topics.ts";

/** Records every greeting; a handler that throws is retried, then dead-lettered. */
export default handler(Greeted)
  .options({ group: "greetings", maxRetries: 3 })
  .inject({ greetings: Greetings })
  .handle(({ greetings }, msg) => {
    greetings.push(msg.payload.name);
  });
`,
    "src/main_test.ts": `import assert from "node:assert/strict";
import { apiClient } from "@fw/application/client";
import type { ApiRoutes } from "./.gen/api.gen.ts";
import { Greetings } from "./greetings.ts";
import { createApp } from "./main.ts";

Deno.test("POST /greetings answers and the event handler records the greeting", async () => {
  const app = createApp({ port: 0, brokerPort: false });
  await app.start();
  const greetings = await app.container.resolve(Greetings);
  // typed from the routes (\`deno task generate\` writes ApiRoutes); app.request: no socket
  const client = apiClient<ApiRoutes>("http://app", { fetch: (url, init) => app.request(url, init) });
  try {
    const res = await client.post("/greetings", { body: { name: "Ada" } });
    assert.equal(res.status, 201);
    if (res.status === 201) assert.equal(res.data.message, "Hello, Ada!");

    const bad = await client.post("/greetings", { body: { name: "" } });
    assert.equal(bad.status, 400);
    if (bad.status === 400) assert.equal(bad.error.errors[0].field, "body.name");
  } finally {
    await app.stop(); // waits for the handlers to finish
  }
  assert.deepEqual(greetings, ["Ada"]);
});
`,
    ".gitignore": "*.sqlite*\n",
  };
}

/** The new project's README. */
export function readme(name: string, fwRoot: string, jsr: boolean): string {
  const depends = jsr
    ? `This project depends on fw's packages from JSR (\`deno.json\` "imports").`
    : `This project depends on the fw checkout at \`${fwRoot}\`: its \`deno.json\` maps
\`@fw/runtime\`, \`@fw/application\` and \`@fw/events\` (and their sub-paths) to the files there.`;
  return `# ${name}

An fw application: HTTP routes in \`src/api/\`, event handlers in
\`src/events/\`, the entry file \`src/main.ts\`.

\`\`\`sh
deno task dev        # generates src/.gen/ and runs the app with --watch on http://127.0.0.1:8000
deno task test       # generate, then the tests (src/main_test.ts calls the app through the typed
                     # client of @fw/application/client over app.request(), no socket)
deno task generate   # writes the static loaders in src/.gen/ (commit them; deployments need them)
\`\`\`

\`\`\`sh
curl -X POST localhost:8000/greetings -H 'content-type: application/json' -d '{"name":"Ada"}'
\`\`\`

## Depending on fw

${depends}

- **Before fw is on JSR** (today): create projects from a checkout with
  \`deno run -A <fw checkout>/scripts/new.ts ${name}\`. The generated \`deno.json\` maps each
  package to the checkout's files by absolute path, so keep the checkout where it is (run the
  scaffolder again, or edit the paths, if you move it).
- **Once fw is published on JSR**: replace the \`@fw/...\` entries of \`deno.json\` "imports" by
  \`deno add jsr:@fw/runtime jsr:@fw/application jsr:@fw/events\` (sub-paths such as
  \`@fw/events/denokv\` then resolve from the same packages), or create the project with
  \`deno run -A <fw checkout>/scripts/new.ts --jsr ${name}\`. The code does not change: it imports
  \`@fw/application\`, never a path.
`;
}
