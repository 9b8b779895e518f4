/**
 * The fw command line: `generate`, `dev`.
 *
 * ```sh
 * deno run -A jsr:@fw/application/cli generate src/main.ts
 * deno run -A jsr:@fw/application/cli dev src/main.ts
 * ```
 *
 * `generate` writes the static loaders beside the entry file: `.gen/api.gen.ts` for route files
 * under `api/` and `.gen/events.gen.ts` for `*.on.ts` handler files under `events/`. The output
 * is sorted and stable, so CI can run it and check `git diff --exit-code`. `dev` generates, then
 * runs the entry with `--watch`.
 *
 * @module
 */

import { listFiles, renderLoader } from "@fw/runtime";
import { isRouteFile } from "./_scan.ts";

/** Options of {@linkcode generate}. */
export interface GenerateOptions {
  /** Route folder relative to the entry directory (default `api`). */
  apiFolder?: string;
  /** Events handler folder relative to the entry directory (default `events`). */
  eventsFolder?: string;
}

/** What {@linkcode generate} wrote. */
export interface GenerateResult {
  /** Absolute paths of the files written (unchanged files included). */
  written: string[];
}

function entryDirOf(entry: string): string {
  const path = entry.startsWith("file:") ? decodeURIComponent(new URL(entry).pathname) : entry;
  const abs = path.startsWith("/") ? path : `${Deno.cwd()}/${path}`;
  return abs.slice(0, abs.lastIndexOf("/")) || "/";
}

async function writeIfChanged(path: string, text: string): Promise<void> {
  try {
    if (await Deno.readTextFile(path) === text) return;
  } catch {
    // missing: write it
  }
  await Deno.mkdir(path.slice(0, path.lastIndexOf("/")), { recursive: true });
  await Deno.writeTextFile(path, text);
}

/**
 * Writes the static loaders for an entry file.
 *
 * @param entry Path or `file:` URL of the entry file (`src/main.ts`).
 * @param options Folder names.
 * @returns The files written.
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
  return { written };
}

const USAGE = `Usage: fw <command> <entry.ts> [options]

Commands:
  generate <entry.ts>   write .gen/api.gen.ts and .gen/events.gen.ts beside the entry file
  dev <entry.ts>        generate, then run the entry with --watch

Options:
  --api-folder <name>     route folder (default api)
  --events-folder <name>  events handler folder (default events)`;

/**
 * Runs the command line.
 *
 * @param args The arguments (`Deno.args`).
 * @returns The exit code.
 */
export async function main(args: string[]): Promise<number> {
  const [command, entry, ...rest] = args;
  const options: GenerateOptions = {};
  for (let i = 0; i < rest.length; i += 2) {
    if (rest[i] === "--api-folder") options.apiFolder = rest[i + 1];
    else if (rest[i] === "--events-folder") options.eventsFolder = rest[i + 1];
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
