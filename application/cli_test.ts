import assert from "node:assert/strict";
import { generate, main, watchLoaders } from "./cli.ts";

/** A project folder with `src/api/health/get.ts` and no entry file (nothing is imported). */
async function project(): Promise<{ dir: string; entry: string }> {
  const dir = await Deno.makeTempDir({ prefix: "fw-cli-" });
  await Deno.mkdir(`${dir}/src/api/health`, { recursive: true });
  await Deno.writeTextFile(`${dir}/src/api/health/get.ts`, "export default 1;\n");
  return { dir, entry: `${dir}/src/main.ts` };
}

async function quietly<T>(fn: () => Promise<T>): Promise<T> {
  const { log, error } = console;
  console.log = console.error = () => {};
  try {
    return await fn();
  } finally {
    Object.assign(console, { log, error });
  }
}

Deno.test("main(generate --check) fails on an out-of-date loader and writes nothing", async () => {
  const { dir, entry } = await project();
  try {
    const loader = `${dir}/src/.gen/api.gen.ts`;
    assert.equal(await quietly(() => main(["generate", entry, "--check"])), 1, "missing loader");
    await assert.rejects(Deno.stat(loader), Deno.errors.NotFound);
    assert.equal(await quietly(() => main(["generate", entry])), 0);
    assert.equal(await quietly(() => main(["generate", entry, "--check"])), 0, "fresh");

    await Deno.writeTextFile(`${dir}/src/api/users.get.ts`, "export default 1;\n");
    const before = await Deno.readTextFile(loader);
    const { changed, written } = await generate(entry, { check: true });
    assert.deepEqual([changed, written], [[loader], []]);
    assert.equal(await Deno.readTextFile(loader), before, "check writes nothing");
    assert.equal(await quietly(() => main(["generate", entry, "--check"])), 1, "new route file");
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("watchLoaders() writes the loader again when a route file comes or goes", async () => {
  const { dir, entry } = await project();
  const stop = new AbortController();
  try {
    await generate(entry);
    const loader = `${dir}/src/.gen/api.gen.ts`;
    const seen: string[][] = [];
    const watching = watchLoaders(entry, {}, stop.signal, (files) => seen.push(files));
    // the watcher starts asynchronously: add files until one is noticed
    for (let i = 0; i < 200 && seen.length === 0; i++) {
      await Deno.writeTextFile(`${dir}/src/api/r${i}.get.ts`, "export default 1;\n");
      await new Promise((r) => setTimeout(r, 20));
    }
    assert.deepEqual(seen[0], [loader]);
    assert.match(await Deno.readTextFile(loader), /"r\d+\.get\.ts"/);
    for await (const f of Deno.readDir(`${dir}/src/api`)) {
      if (f.name.endsWith(".get.ts")) await Deno.remove(`${dir}/src/api/${f.name}`);
    }
    for (let i = 0; i < 200 && /"r\d+/.test(await Deno.readTextFile(loader)); i++) {
      await new Promise((r) => setTimeout(r, 20));
    }
    assert.doesNotMatch(await Deno.readTextFile(loader), /"r\d+/, "removed files leave the loader");
    assert.match(await Deno.readTextFile(loader), /"health\/get\.ts"/);
    stop.abort();
    await watching;
  } finally {
    stop.abort();
    await Deno.remove(dir, { recursive: true });
  }
});
