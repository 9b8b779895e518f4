/**
 * The fw command line: `generate`, `dev`, `openapi`, `dlq`.
 *
 * ```sh
 * deno run -A jsr:@fw/application/cli generate src/main.ts
 * deno run -A jsr:@fw/application/cli dev src/main.ts
 * deno run -A jsr:@fw/application/cli openapi src/main.ts --out openapi.json
 * FW_DASHBOARD_TOKEN=... deno run -A jsr:@fw/application/cli dlq redrive --url https://app --topic orders.placed
 * ```
 *
 * `generate` writes the static loaders beside the entry file: `.gen/api.gen.ts` for route files
 * under `api/` (with the route table, what each file name declares, which `api()` takes at
 * start-up instead of reading the names; it also exports `type ApiRoutes`, the route map of
 * `@fw/application/client`, with the prefix the entry's `api()` serves them under) and `.gen/events.gen.ts` for `*.on.ts`
 * handler files under `events/`. Then it
 * imports the entry and, for every exported application whose `api()` has the `openapi` option,
 * warms it up (nothing listens) and writes `.gen/openapi.json` (`openapi-v1.json` for an `api()`
 * under `/v1`). So the entry must export its application and start it only under
 * `if (import.meta.main)`. The output is sorted and stable; `generate --check` writes nothing and
 * fails when a file is out of date (for CI). `dev` generates, then runs the entry with `--watch`
 * and writes the loaders again whenever route or handler files come or go, so an entry that
 * imports its loaders statically (as a deployment needs) stays current. SIGINT or SIGTERM to
 * `dev` passes the signal to the app, which drains, and ends the watcher 1.5 s later at the
 * latest (Deno's watcher would otherwise wait for a file change). `openapi` prints the
 * document (or writes it with `--out`). `dlq list|redrive|discard --url <app>` lists, redrives or
 * discards the dead letters of a running application through its dashboard's JSON API
 * (`@fw/dashboard`), with the bearer token from `FW_DASHBOARD_TOKEN`.
 *
 * @module
 */

import { listFiles, renderLoader } from "@fw/runtime/loader";
import { isRouteFile, routeTable } from "./_scan.ts";
import { recordedPrefixes, renderRouteTypes, servedPrefixes } from "./_route_types.ts";
import { dlq, DLQ_USAGE } from "./_dlq_cli.ts";
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
  /** Write nothing; report in `changed` the files that are out of date (default false). */
  check?: boolean;
}

/** What {@linkcode generate} wrote. */
export interface GenerateResult {
  /** Absolute paths of the files written (unchanged files included; none with `check`). */
  written: string[];
  /** Absolute paths of the files whose content changed (with `check`: would change). */
  changed: string[];
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

/** Writes `text` unless the file already holds it (or only compares, with `check`). */
async function writeIfChanged(path: string, text: string, check = false): Promise<boolean> {
  try {
    if (await Deno.readTextFile(path) === text) return false;
  } catch {
    // missing: write it
  }
  if (check) return true;
  const slash = path.lastIndexOf("/");
  if (slash > 0) await Deno.mkdir(path.slice(0, slash), { recursive: true });
  // written beside and renamed over, so a reader (the app's --watch restart, a test) never sees
  // a truncated or half-written loader
  const temp = `${path}.${crypto.randomUUID().slice(0, 8)}.tmp`;
  try {
    await Deno.writeTextFile(temp, text);
    await Deno.rename(temp, path);
  } catch (error) {
    await Deno.remove(temp).catch(() => {});
    throw error;
  }
  return true;
}

/**
 * Writes the static loaders for an entry file and, when its exported application configures
 * `api({ openapi })`, the OpenAPI document (`.gen/openapi.json`).
 *
 * @param entry Path or `file:` URL of the entry file (`src/main.ts`).
 * @param options Folder names; `openapi: false` skips importing the entry (so does a missing
 *   entry file); `check: true` only compares.
 * @returns The files written and those that changed.
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
  const result: GenerateResult = { written: [], changed: [] };
  const emit = async (out: string, text: string) => {
    if (await writeIfChanged(out, text, options.check)) result.changed.push(out);
    if (!options.check) result.written.push(out);
  };
  const apiFolder = options.apiFolder ?? "api";
  const routes = await listFiles(`${dir}/${apiFolder}`, isRouteFile);
  const eventsFolder = options.eventsFolder ?? "events";
  const handlers = await listFiles(`${dir}/${eventsFolder}`, (f) => f.endsWith(".on.ts"));
  const importEntry = options.openapi !== false && await isFile(entryPathOf(entry));
  const apiOut = `${dir}/.gen/api.gen.ts`;
  const eventsOut = `${dir}/.gen/events.gen.ts`;
  if (routes) {
    // the route map needs the prefix, known once the entry's app is warmed up; the entry may
    // import the loaders, so a missing one is written first
    const recorded = recordedPrefixes(await Deno.readTextFile(apiOut).catch(() => "")) ?? [""];
    // the route table: what the file names declare, so that start-up does not read them again
    const loader = renderLoader(apiFolder, routes, routeTable(routes));
    let prefixes = recorded;
    if (importEntry) {
      if (!options.check) {
        if (!await isFile(apiOut)) await writeIfChanged(apiOut, loader);
        if (handlers && !await isFile(eventsOut)) {
          await writeIfChanged(eventsOut, renderLoader(eventsFolder, handlers));
        }
      }
      prefixes = await servedPrefixes(entryUrlOf(entry), apiFolder) ?? recorded;
    }
    await emit(apiOut, loader + renderRouteTypes(routes, prefixes));
  }
  if (handlers) await emit(eventsOut, renderLoader(eventsFolder, handlers));
  if (importEntry) {
    for (const file of await openApiFiles(entryUrlOf(entry))) {
      await emit(`${dir}/.gen/${file.name}`, openApiText(file.document));
    }
  }
  return result;
}

/**
 * Keeps the static loaders of an entry current while files come and go: watches the route and
 * handler folders and, after each creation, removal or rename, writes the loaders again (a loader
 * whose content does not change is not touched). `dev` runs it beside the app, whose `--watch`
 * restart then picks up a changed loader.
 *
 * @param entry Path or `file:` URL of the entry file.
 * @param options Folder names.
 * @param signal Stops watching when aborted.
 * @param onChange Called with the loaders written again.
 * @returns A promise that settles once watching has stopped (at once when neither folder exists).
 *
 * @example
 * ```ts ignore
 * import { watchLoaders } from "@fw/application/cli";
 * const stop = new AbortController();
 * watchLoaders("src/main.ts", {}, stop.signal, (files) => console.log("regenerated", files));
 * ```
 */
export async function watchLoaders(
  entry: string,
  options: GenerateOptions = {},
  signal?: AbortSignal,
  onChange?: (files: string[]) => void,
): Promise<void> {
  const dir = entryDirOf(entry);
  const folders: string[] = [];
  for (const name of [options.apiFolder ?? "api", options.eventsFolder ?? "events"]) {
    if (await isDirectory(`${dir}/${name}`)) folders.push(`${dir}/${name}`);
  }
  if (folders.length === 0 || signal?.aborted) return;
  const watcher = Deno.watchFs(folders, { recursive: true });
  const close = () => watcher.close();
  signal?.addEventListener("abort", close, { once: true });
  try {
    for await (const event of watcher) {
      if (event.kind !== "create" && event.kind !== "remove" && event.kind !== "rename") continue;
      const { changed } = await generate(entry, { ...options, openapi: false, check: false });
      if (changed.length && onChange) onChange(changed);
    }
  } finally {
    signal?.removeEventListener("abort", close);
  }
}

async function isDirectory(path: string): Promise<boolean> {
  try {
    return (await Deno.stat(path)).isDirectory;
  } catch {
    return false;
  }
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

/**
 * How long `dev` lets the app drain after SIGINT or SIGTERM before it ends the watcher (and the
 * app with it): a development server stops within about this long.
 */
const DEV_STOP_MS = 1500;

const USAGE = `Usage: fw <command> <entry.ts> [options]

Commands:
  generate <entry.ts>   write .gen/api.gen.ts, .gen/events.gen.ts and, when api({ openapi })
                        is set, .gen/openapi.json beside the entry file
  dev <entry.ts>        generate, then run the entry with --watch; loaders are written again
                        when route or handler files come or go; SIGINT or SIGTERM
                        stops the app and the watcher within about 1.5 s
  openapi <entry.ts>    print the OpenAPI document
  dlq <list|redrive|discard> --url <app>
                        dead letters of a running app, through its dashboard (fw dlq --help)

Options:
  --check                 generate: write nothing, exit 1 when a file is out of date
  --api-folder <name>     route folder (default api)
  --events-folder <name>  events handler folder (default events)
  --out <file>            openapi: write the document to a file instead of printing it
  --prefix <path>         openapi: the api() to document when there are several`;

const encoder = new TextEncoder();
const DLQ_IO = {
  env: (name: string) => Deno.env.get(name),
  out: (line: string) => console.log(line),
  progress: (text: string) => void Deno.stderr.writeSync(encoder.encode(`\r${text}`)),
  err: (line: string) => console.error(line),
};

/**
 * Runs the command line.
 *
 * @param args The arguments (`Deno.args`).
 * @returns The exit code.
 */
export async function main(args: string[]): Promise<number> {
  if (args[0] === "dlq") {
    if (args[1] === "--help" || args[1] === "-h") {
      console.log(DLQ_USAGE);
      return 0;
    }
    return await dlq(args.slice(1), DLQ_IO);
  }
  const [command, entry, ...rest] = args;
  const options: GenerateOptions = {};
  let out: string | undefined;
  let prefix: string | undefined;
  for (let i = 0; i < rest.length; i += 2) {
    if (rest[i] === "--check" && command === "generate") {
      options.check = true;
      i--;
    } else if (rest[i] === "--api-folder") options.apiFolder = rest[i + 1];
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
    const { written, changed } = await generate(entry, options);
    if (options.check) {
      for (const f of changed) console.error(`out of date: ${f}`);
      if (changed.length) console.error("run generate and commit the result");
      return changed.length ? 1 : 0;
    }
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
    const watching = new AbortController();
    const watched = watchLoaders(entry, options, watching.signal, (files) => {
      for (const f of files) console.error(`regenerated ${f}`);
    });
    const child = new Deno.Command(Deno.execPath(), {
      args: ["run", "-A", "--watch", entry],
      stdin: "inherit",
      stdout: "inherit",
      stderr: "inherit",
    }).spawn();
    // Deno's watcher runs the app in its own process and, once the app has stopped on a signal,
    // waits for a file change instead of exiting; so the first SIGINT/SIGTERM is passed on (the
    // app drains gracefully) and the watcher is killed DEV_STOP_MS later; a second signal kills
    // it at once.
    let stopping: ReturnType<typeof setTimeout> | undefined;
    const kill = (signal: Deno.Signal) => {
      try {
        child.kill(signal);
      } catch {
        // already gone
      }
    };
    const forward = (signal: Deno.Signal) => () => {
      if (stopping !== undefined) return kill("SIGKILL");
      kill(signal);
      stopping = setTimeout(() => kill("SIGKILL"), DEV_STOP_MS);
    };
    const listeners = (["SIGINT", "SIGTERM"] as const).map((sig) => [sig, forward(sig)] as const);
    for (const [sig, fn] of listeners) Deno.addSignalListener(sig, fn);
    const { code } = await child.status;
    clearTimeout(stopping);
    for (const [sig, fn] of listeners) Deno.removeSignalListener(sig, fn);
    watching.abort();
    await watched;
    // a stop asked for by a signal is an orderly end, whatever the watcher's exit status
    return stopping === undefined ? code : 0;
  }
  console.error(`Unknown command "${command}"\n\n${USAGE}`);
  return 2;
}

if (import.meta.main) Deno.exit(await main(Deno.args));
