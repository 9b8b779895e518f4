/**
 * The npm tools of the contract tests (Portman, newman, Stoplight Prism), pinned in
 * `tests/contract/npm/package.json` and its lockfile, installed with `npm ci` on first use: they are
 * test tools, never a dependency of fw. Also starts the example apps as subprocesses.
 *
 * @module
 */

import { fileURLToPath as fromFileUrl } from "node:url";

/** Where the tools are installed (a folder of its own: Deno reads a `package.json` beside code). */
export const HERE: string = fromFileUrl(new URL("./npm/", import.meta.url));
const BIN = `${HERE}node_modules/.bin/`;

async function run(
  cmd: string,
  args: string[],
  cwd = HERE,
): Promise<Deno.CommandOutput> {
  return await new Deno.Command(cmd, {
    args,
    cwd,
    stdout: "piped",
    stderr: "piped",
  }).output();
}

const text = (bytes: Uint8Array): string => new TextDecoder().decode(bytes);

/**
 * Installs the pinned tools with `npm ci` when they are missing.
 *
 * @throws {Error} When npm fails, with its output: the contract tests cannot run without them.
 */
export async function ensureTools(): Promise<void> {
  const present = async () =>
    (await Promise.all(
      ["portman", "newman", "prism"].map((b) => Deno.stat(BIN + b).then(() => true, () => false)),
    )).every(Boolean);
  if (await present()) return;
  // test files run in parallel: the first one installs, the others wait for it
  const lock = `${HERE}.installing`;
  try {
    await Deno.mkdir(lock);
  } catch {
    for (let i = 0; i < 600 && !(await present()); i++) {
      await new Promise((r) => setTimeout(r, 500));
    }
    if (await present()) return;
    throw new Error(`Cannot install the contract-test tools: ${lock} is held by another run`);
  }
  try {
    const out = await run("npm", ["ci", "--no-audit", "--no-fund", "--loglevel=error"]);
    if (!out.success) {
      throw new Error(
        `Cannot install the contract-test tools (npm ci in ${HERE}): ${text(out.stderr)}`,
      );
    }
  } finally {
    await Deno.remove(lock);
  }
}

/** The outcome of one newman run. */
export interface NewmanRun {
  /** Requests executed, by item name. */
  readonly executed: { name: string; status: number }[];
  /** Assertions run. */
  readonly assertions: number;
  /** Failed assertions and errors, one line each. */
  readonly failures: string[];
}

/**
 * Generates the Portman collection of a document and runs it with newman.
 *
 * @param dir A scratch folder.
 * @param document The OpenAPI document.
 * @param config The Portman configuration.
 * @param baseUrl Where the app listens.
 * @param drop Item names to take out of the collection before running it.
 */
export async function portmanNewman(
  dir: string,
  document: unknown,
  config: unknown,
  baseUrl: string,
  drop: (name: string) => boolean,
): Promise<NewmanRun> {
  await Deno.writeTextFile(`${dir}/openapi.json`, JSON.stringify(document));
  await Deno.writeTextFile(
    `${dir}/portman.json`,
    JSON.stringify(config, null, 2),
  );
  const gen = await run(BIN + "portman", [
    "-l",
    "openapi.json",
    "-c",
    "portman.json",
    "-b",
    baseUrl,
    "-o",
    "collection.json",
    "--no-warn",
  ], dir);
  if (!gen.success) {
    throw new Error(`Portman failed: ${text(gen.stdout)}${text(gen.stderr)}`);
  }
  const collection = JSON.parse(
    await Deno.readTextFile(`${dir}/collection.json`),
  );
  const prune = (items: { name: string; item?: unknown[] }[]): unknown[] =>
    items.filter((i) => !drop(i.name)).map((i) =>
      i.item ? { ...i, item: prune(i.item as { name: string }[]) } : i
    );
  collection.item = prune(collection.item);
  await Deno.writeTextFile(
    `${dir}/collection.json`,
    JSON.stringify(collection, null, 2),
  );
  await run(BIN + "newman", [
    "run",
    "collection.json",
    "--reporters",
    "json",
    "--reporter-json-export",
    "report.json",
    "--timeout-request",
    "10000",
    "--timeout",
    "300000",
    "--ignore-redirects",
  ], dir);
  const report = JSON.parse(await Deno.readTextFile(`${dir}/report.json`)).run;
  return {
    executed: report.executions.map((
      e: { item: { name: string }; response?: { code: number } },
    ) => ({
      name: e.item.name,
      status: e.response?.code ?? 0,
    })),
    assertions: report.stats.assertions.total,
    failures: report.failures.map((
      f: { source?: { name?: string }; error: { message: string } },
    ) => `${f.source?.name}: ${f.error.message}`),
  };
}

/** A subprocess serving an example. */
export interface RunningExample {
  /** Its base URL. */
  readonly url: string;
  /** Everything it wrote. */
  output(): string;
  /** Stops it. */
  stop(): Promise<void>;
}

/**
 * Starts an entry file with `deno run -A` on a free port and waits for `Listening on`.
 *
 * @param entry The entry file, from the repository root.
 * @param env Its environment variables (`PORT` is set to 0).
 */
export async function startExample(
  entry: string,
  env: Record<string, string> = {},
): Promise<RunningExample> {
  const root = fromFileUrl(new URL("../../", import.meta.url));
  const child = new Deno.Command(Deno.execPath(), {
    args: ["run", "-A", entry],
    cwd: root,
    env: { PORT: "0", NO_COLOR: "1", ...env },
    stdout: "piped",
    stderr: "piped",
  }).spawn();
  let log = "";
  const { promise: listening, resolve, reject } = Promise.withResolvers<
    string
  >();
  const read = async (stream: ReadableStream<Uint8Array>) => {
    for await (const chunk of stream.pipeThrough(new TextDecoderStream())) {
      log += chunk;
      const m = /Listening on (http:\/\/[0-9.]+:\d+)/.exec(log);
      if (m) resolve(m[1]);
    }
  };
  const done = Promise.all([read(child.stdout), read(child.stderr)]);
  child.status.then((s) => reject(new Error(`${entry} exited (${s.code}): ${log}`)));
  const timer = setTimeout(
    () => reject(new Error(`${entry} did not start: ${log}`)),
    60_000,
  );
  try {
    const url = await listening;
    return {
      url,
      output: () => log,
      stop: async () => {
        child.kill("SIGTERM");
        await child.status;
        await done;
      },
    };
  } catch (error) {
    try {
      child.kill("SIGKILL");
    } catch { /* already gone */ }
    await done;
    throw error;
  } finally {
    clearTimeout(timer);
  }
}

/** A port no one listens on right now. */
export function freePort(): number {
  const listener = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  const { port } = listener.addr as Deno.NetAddr;
  listener.close();
  return port;
}

/**
 * Starts Stoplight Prism as a validating proxy: every request and response is checked against
 * the document and its violations are reported in the `sl-violations` response header.
 *
 * @param document The document file.
 * @param upstream The app's base URL.
 * @returns Prism's base URL and a stop function.
 */
export async function startPrism(
  document: string,
  upstream: string,
): Promise<{ url: string; stop(): Promise<void> }> {
  const port = freePort();
  const child = new Deno.Command(BIN + "prism", {
    args: ["proxy", document, upstream, "--host", "127.0.0.1", "--port", String(port)],
    cwd: HERE,
    stdout: "piped",
    stderr: "piped",
  }).spawn();
  let log = "";
  const { promise: ready, resolve, reject } = Promise.withResolvers<void>();
  const read = async (stream: ReadableStream<Uint8Array>) => {
    for await (const chunk of stream.pipeThrough(new TextDecoderStream())) {
      log += chunk;
      if (log.includes("Prism is listening")) resolve();
    }
  };
  const done = Promise.all([read(child.stdout), read(child.stderr)]);
  child.status.then((s) => reject(new Error(`Prism exited (${s.code}): ${log}`)));
  const timer = setTimeout(() => reject(new Error(`Prism did not start: ${log}`)), 120_000);
  const stop = async () => {
    try {
      child.kill("SIGTERM");
    } catch { /* already gone */ }
    await child.status;
    await done;
  };
  try {
    await ready;
  } catch (error) {
    await stop();
    throw error;
  } finally {
    clearTimeout(timer);
  }
  return { url: `http://127.0.0.1:${port}`, stop };
}
