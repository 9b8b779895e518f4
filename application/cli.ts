/**
 * The fw command line: `generate`, `dev`, `openapi`.
 *
 * ```sh
 * deno run -A jsr:@fw/application/cli generate src/main.ts
 * deno run -A jsr:@fw/application/cli dev src/main.ts
 * deno run -A jsr:@fw/application/cli openapi src/main.ts --out openapi.json
 * ```
 *
 * `generate` writes the static loaders beside the entry file: `.gen/api.gen.ts` for route files
 * under `api/` and `.gen/events.gen.ts` for `*.on.ts` handler files under `events/`. Then it
 * imports the entry and, for every exported application whose `api()` has the `openapi` option,
 * warms it up (nothing listens) and writes `.gen/openapi.json` (`openapi-v1.json` for an `api()`
 * under `/v1`). So the entry must export its application and start it only under
 * `if (import.meta.main)`. The output is sorted and stable, so CI can run it and check
 * `git diff --exit-code`. `dev` generates, then runs the entry with `--watch`. `openapi` prints
 * the document (or writes it with `--out`).
 *
 * @module
 */

import { listFiles, renderLoader } from "@fw/runtime";
import { isRouteFile } from "./_scan.ts";
import { openApiFiles } from "./openapi/_files.ts";
import type { OpenApiDocument } from "./openapi/types.ts";

/** Options of {@linkcode generate}. */
export interface GenerateOptions {
  /** Route folder relative to the entry directory (default `api`). */
  apiFolder?: string;
  /** Events handler folder relative to the entry directory (default `events`). */
  eventsFolder?: string;
  /** Import the entry and write `.gen/openapi.json` when `api({ openapi })` is set (default true). */
  openapi?: boolean;
}

/** What {@linkcode generate} wrote. */
export interface GenerateResult {
  /** Absolute paths of the files written (unchanged files included). */
  written: string[];
}

function entryPathOf(entry: string): string {
  const path = entry.startsWith("file:") ? decodeURIComponent(new URL(entry).pathname) : entry;
  return path.startsWith("/") ? path : `${Deno.cwd()}/${path}`;
}

function entryDirOf(entry: string): string {
  const abs = entryPathOf(entry);
  return abs.slice(0, abs.lastIndexOf("/")) || "/";
}

function entryUrlOf(entry: string): string {
  const url = new URL("file://");
  url.pathname = entryPathOf(entry);
  return url.href;
}

async function isFile(path: string): Promise<boolean> {
  try {
    return (await Deno.stat(path)).isFile;
  } catch {
    return false;
  }
}

/** The document as `generate` writes it: two-space JSON and a final newline. */
function openApiText(document: unknown): string {
  return JSON.stringify(document, null, 2) + "\n";
}

async function writeIfChanged(path: string, text: string): Promise<void> {
  try {
    if (await Deno.readTextFile(path) === text) return;
  } catch {
    // missing: write it
  }
  const slash = path.lastIndexOf("/");
  if (slash > 0) await Deno.mkdir(path.slice(0, slash), { recursive: true });
  await Deno.writeTextFile(path, text);
}

/**
 * Writes the static loaders for an entry file and, when its exported application configures
 * `api({ openapi })`, the OpenAPI document (`.gen/openapi.json`).
 *
 * @param entry Path or `file:` URL of the entry file (`src/main.ts`).
 * @param options Folder names; `openapi: false` skips importing the entry (so does a missing
 *   entry file).
 * @returns The files written.
 * @throws {Error} When the entry cannot be imported or warmed up (for the OpenAPI document).
 *
 * @example
 * ```ts ignore
 * import { generate } from "@fw/application/cli";
 * const { written } = await generate("src/main.ts");
 * console.log(written); // [".../src/.gen/api.gen.ts", ".../src/.gen/openapi.json"]
 * ```
 */
export async function generate(
  entry: string,
  options: GenerateOptions = {},
): Promise<GenerateResult> {
  const dir = entryDirOf(entry);
  const written: string[] = [];
  const apiFolder = options.apiFolder ?? "api";
  const routes = await listFiles(`${dir}/${apiFolder}`, isRouteFile);
  if (routes) {
    const out = `${dir}/.gen/api.gen.ts`;
    await writeIfChanged(out, renderLoader(apiFolder, routes));
    written.push(out);
  }
  const eventsFolder = options.eventsFolder ?? "events";
  const handlers = await listFiles(`${dir}/${eventsFolder}`, (f) => f.endsWith(".on.ts"));
  if (handlers) {
    const out = `${dir}/.gen/events.gen.ts`;
    await writeIfChanged(out, renderLoader(eventsFolder, handlers));
    written.push(out);
  }
  if (options.openapi !== false && await isFile(entryPathOf(entry))) {
    for (const file of await openApiFiles(entryUrlOf(entry))) {
      const out = `${dir}/.gen/${file.name}`;
      await writeIfChanged(out, openApiText(file.document));
      written.push(out);
    }
  }
  return { written };
}

/**
 * The OpenAPI document an entry file's application configures with `api({ openapi })`.
 *
 * @param entry Path or `file:` URL of the entry file.
 * @param prefix Which `api()` to take when there are several (its prefix, `""` for the root).
 * @returns The document.
 * @throws {Error} When there is none, or several and `prefix` does not pick one.
 *
 * @example
 * ```ts ignore
 * import { openapi } from "@fw/application/cli";
 * const doc = await openapi("src/main.ts");
 * console.log(doc.info.version);
 * ```
 */
export async function openapi(entry: string, prefix?: string): Promise<OpenApiDocument> {
  const files = await openApiFiles(entryUrlOf(entry));
  const chosen = prefix === undefined ? files : files.filter((f) => f.prefix === prefix);
  if (chosen.length === 1) return chosen[0].document;
  if (chosen.length === 0) {
    throw new Error(
      prefix === undefined
        ? `No exported application of "${entry}" sets api({ openapi })`
        : `No api({ openapi }) of "${entry}" has the prefix "${prefix}"`,
    );
  }
  throw new Error(
    `Several api({ openapi }) plugins in "${entry}": pick one with --prefix (${
      chosen.map((f) => JSON.stringify(f.prefix)).join(", ")
    })`,
  );
}

const USAGE = `Usage: fw <command> <entry.ts> [options]

Commands:
  generate <entry.ts>   write .gen/api.gen.ts, .gen/events.gen.ts and, when api({ openapi })
                        is set, .gen/openapi.json beside the entry file
  dev <entry.ts>        generate, then run the entry with --watch
  openapi <entry.ts>    print the OpenAPI document

Options:
  --api-folder <name>     route folder (default api)
  --events-folder <name>  events handler folder (default events)
  --out <file>            openapi: write the document to a file instead of printing it
  --prefix <path>         openapi: the api() to document when there are several`;

/**
 * Runs the command line.
 *
 * @param args The arguments (`Deno.args`).
 * @returns The exit code.
 */
export async function main(args: string[]): Promise<number> {
  const [command, entry, ...rest] = args;
  const options: GenerateOptions = {};
  let out: string | undefined;
  let prefix: string | undefined;
  for (let i = 0; i < rest.length; i += 2) {
    if (rest[i] === "--api-folder") options.apiFolder = rest[i + 1];
    else if (rest[i] === "--events-folder") options.eventsFolder = rest[i + 1];
    else if (rest[i] === "--out" && command === "openapi") out = rest[i + 1];
    else if (rest[i] === "--prefix" && command === "openapi") prefix = rest[i + 1];
    else {
      console.error(`Unknown option "${rest[i]}"\n\n${USAGE}`);
      return 2;
    }
  }
  if (!command || command === "--help" || command === "-h") {
    console.log(USAGE);
    return command ? 0 : 2;
  }
  if (!entry) {
    console.error(`Missing entry file\n\n${USAGE}`);
    return 2;
  }
  if (command === "generate") {
    const { written } = await generate(entry, options);
    for (const f of written) console.log(`generated ${f}`);
    if (written.length === 0) {
      console.log("nothing to generate: no api/ or events/ folder beside the entry");
    }
    return 0;
  }
  if (command === "openapi") {
    const text = openApiText(await openapi(entry, prefix));
    if (out === undefined) await Deno.stdout.write(new TextEncoder().encode(text));
    else {
      await writeIfChanged(out, text);
      console.error(`wrote ${out}`);
    }
    return 0;
  }
  if (command === "dev") {
    await generate(entry, options);
    const child = new Deno.Command(Deno.execPath(), {
      args: ["run", "-A", "--watch", entry],
      stdin: "inherit",
      stdout: "inherit",
      stderr: "inherit",
    }).spawn();
    const forward = (signal: Deno.Signal) => () => {
      try {
        child.kill(signal);
      } catch {
        // already gone
      }
    };
    const listeners = (["SIGINT", "SIGTERM"] as const).map((sig) => [sig, forward(sig)] as const);
    for (const [sig, fn] of listeners) Deno.addSignalListener(sig, fn);
    const { code } = await child.status;
    for (const [sig, fn] of listeners) Deno.removeSignalListener(sig, fn);
    return code;
  }
  console.error(`Unknown command "${command}"\n\n${USAGE}`);
  return 2;
}

if (import.meta.main) Deno.exit(await main(Deno.args));
