/**
 * `deno run -A <fw>/scripts/new.ts [--jsr] <folder>`: creates an fw project in `<folder>` (its
 * name is the folder's last segment): `deno.json` with the tasks `dev`, `test` and `generate`,
 * `src/main.ts`, one route, one topic and its handler, and a test that calls the app with
 * `app.request()`.
 *
 * From a checkout (the default) the project's import map points at this checkout's packages by
 * absolute path; with `--jsr` it names the published packages instead. An invalid name or an
 * existing folder that is not empty is refused with a message and exit code 1.
 *
 * @module
 */

import { basename, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { readme, sourceFiles } from "./_new_templates.ts";

const FW_ROOT = new URL("../", import.meta.url);
const MEMBERS = ["runtime", "application", "events"];
const NAME = /^[a-z][a-z0-9]*(-[a-z0-9]+)*$/;

/** A refusal: the message is for the user, the exit code is 1. */
export class NewProjectError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "NewProjectError";
  }
}

/** Options of {@linkcode createProject}. */
export interface NewProjectOptions {
  /** Depend on the packages published on JSR instead of this checkout. */
  jsr?: boolean;
}

/** The `imports` of the new project: every export of every member. */
async function importMap(jsr: boolean): Promise<Record<string, string>> {
  const out: Record<string, string> = {};
  for (const dir of MEMBERS) {
    const config = JSON.parse(await Deno.readTextFile(new URL(`${dir}/deno.json`, FW_ROOT)));
    const exports: Record<string, string> = typeof config.exports === "string"
      ? { ".": config.exports }
      : config.exports;
    for (const [key, file] of Object.entries(exports)) {
      const specifier = `${config.name}${key.slice(1)}`;
      out[specifier] = jsr
        ? `jsr:${config.name}@^${config.version}${key.slice(1)}`
        : new URL(file, new URL(`${dir}/`, FW_ROOT)).href;
    }
  }
  return out;
}

async function isEmptyFolder(path: string): Promise<boolean | undefined> {
  try {
    const info = await Deno.stat(path);
    if (!info.isDirectory) return false;
  } catch (err) {
    if (err instanceof Deno.errors.NotFound) return undefined;
    throw err;
  }
  for await (const _ of Deno.readDir(path)) return false;
  return true;
}

/**
 * Creates a project.
 *
 * @param target The folder to create (its last segment is the project name).
 * @param options `jsr` to depend on the published packages.
 * @returns The files written, relative to the folder.
 * @throws {NewProjectError} For an invalid name or a folder that exists and is not empty.
 */
export async function createProject(
  target: string,
  options: NewProjectOptions = {},
): Promise<string[]> {
  const dir = resolve(target);
  const name = basename(dir);
  if (!NAME.test(name) || name.length > 64) {
    throw new NewProjectError(
      `Invalid project name "${name}": use lower-case letters, digits and single dashes, ` +
        `starting with a letter and at most 64 characters (for example "my-app")`,
    );
  }
  const empty = await isEmptyFolder(dir);
  if (empty === false) {
    throw new NewProjectError(
      `Cannot create the project in "${dir}": it exists and is not an empty folder`,
    );
  }
  const fwRoot = fileURLToPath(FW_ROOT);
  const config = {
    tasks: {
      dev: "deno run -A @fw/application/cli dev src/main.ts",
      generate: "deno run -A @fw/application/cli generate src/main.ts",
      // the tests call the app through the typed client, whose route map generate writes
      test: "deno task generate && deno test -A",
    },
    imports: await importMap(options.jsr ?? false),
    // Deno KV (for `@fw/events/denokv` and your own data) is still behind a flag. With
    // lazy-dynamic-imports, Deno reads a module imported with `await import()` (Swagger UI, jose,
    // OpenTelemetry, the YAML and XML writers) when it is first used, not at start-up.
    unstable: ["kv", "lazy-dynamic-imports"],
    fmt: { lineWidth: 100, exclude: ["src/.gen/"] },
    lint: { exclude: ["src/.gen/"] },
  };
  const files: Record<string, string> = {
    "deno.json": `${JSON.stringify(config, null, 2)}\n`,
    "README.md": readme(name, fwRoot, options.jsr ?? false),
    ...sourceFiles(name),
  };
  for (const [path, text] of Object.entries(files)) {
    const file = `${dir}/${path}`;
    await Deno.mkdir(file.slice(0, file.lastIndexOf("/")), { recursive: true });
    await Deno.writeTextFile(file, text);
  }
  // Line breaks depend on the checkout's path: let the formatter settle them.
  await new Deno.Command(Deno.execPath(), { args: ["fmt", "--quiet"], cwd: dir, stdout: "null" })
    .output();
  return Object.keys(files);
}

const USAGE = "Usage: deno run -A scripts/new.ts [--jsr] <folder>";

/**
 * Runs the command line.
 *
 * @param args The arguments.
 * @returns The exit code.
 */
export async function main(args: string[]): Promise<number> {
  const jsr = args.includes("--jsr");
  const rest = args.filter((a) => a !== "--jsr");
  if (rest.length !== 1 || rest[0].startsWith("-")) {
    console.error(rest.length === 0 ? `Missing project folder\n${USAGE}` : USAGE);
    return 1;
  }
  try {
    const written = await createProject(rest[0], { jsr });
    const dir = resolve(rest[0]);
    console.log(`Created ${basename(dir)} in ${dir}:`);
    for (const f of written) console.log(`  ${f}`);
    console.log(`\nNext:\n  cd ${rest[0]}\n  deno task dev\n  deno task test`);
    return 0;
  } catch (err) {
    if (!(err instanceof NewProjectError)) throw err;
    console.error(err.message);
    return 1;
  }
}

if (import.meta.main) Deno.exit(await main(Deno.args));
