/**
 * `scripts/new.ts`: the scaffolder makes a project whose own `deno task generate` and
 * `deno task test` pass in a folder outside this repository, and refuses invalid names and
 * folders that are not empty.
 */

import assert from "node:assert/strict";

const NEW = new URL("../scripts/new.ts", import.meta.url).pathname;

async function run(args: string[], cwd: string): Promise<{ code: number; out: string }> {
  const { code, stdout, stderr } = await new Deno.Command(Deno.execPath(), {
    args,
    cwd,
    stdin: "null",
    env: { NO_COLOR: "1" },
  }).output();
  const dec = new TextDecoder();
  return { code, out: dec.decode(stdout) + dec.decode(stderr) };
}

Deno.test("scripts/new.ts creates a project whose generate and test tasks pass", async () => {
  const tmp = await Deno.makeTempDir({ prefix: "fw-new-" });
  try {
    const made = await run(["run", "-A", NEW, "my-app"], tmp);
    assert.equal(made.code, 0, made.out);
    assert.match(made.out, /Created my-app/);
    const dir = `${tmp}/my-app`;
    const config = JSON.parse(await Deno.readTextFile(`${dir}/deno.json`));
    assert.deepEqual(Object.keys(config.tasks).sort(), ["dev", "generate", "test"]);
    const app = new URL("../application/mod.ts", import.meta.url).href;
    assert.equal(config.imports["@fw/application"], app);
    assert.match(await Deno.readTextFile(`${dir}/README.md`), /deno add jsr:@fw\/runtime/);

    const generate = await run(["task", "generate"], dir);
    assert.equal(generate.code, 0, generate.out);
    const loader = await Deno.readTextFile(`${dir}/src/.gen/api.gen.ts`);
    assert.match(loader, /greetings\/post\.ts/);
    assert.match(loader, /export type ApiRoutes =[^;]*"POST \/greetings": typeof \$0\.default;/);
    const test = await run(["task", "test"], dir);
    assert.equal(test.code, 0, test.out);
    assert.match(test.out, /ok \| 1 passed \| 0 failed/);
    const fmt = await run(["fmt", "--check"], dir);
    assert.equal(fmt.code, 0, fmt.out);
  } finally {
    await Deno.remove(tmp, { recursive: true });
  }
});

Deno.test("scripts/new.ts refuses invalid names and folders that are not empty", async () => {
  const tmp = await Deno.makeTempDir({ prefix: "fw-new-" });
  try {
    for (const name of ["My App", "1app", "my--app", "my_app", "app-"]) {
      const r = await run(["run", "-A", NEW, name], tmp);
      assert.equal(r.code, 1, name);
      assert.match(
        r.out,
        new RegExp(
          `^Invalid project name "${name}": use lower-case letters, digits and single dashes`,
        ),
      );
    }
    await Deno.mkdir(`${tmp}/taken`);
    await Deno.writeTextFile(`${tmp}/taken/notes.txt`, "mine");
    const taken = await run(["run", "-A", NEW, "taken"], tmp);
    assert.equal(taken.code, 1);
    assert.equal(
      taken.out.trim(),
      `Cannot create the project in "${tmp}/taken": it exists and is not an empty folder`,
    );
    assert.deepEqual([...Deno.readDirSync(`${tmp}/taken`)].map((e) => e.name), ["notes.txt"]);
    assert.equal((await run(["run", "-A", NEW], tmp)).code, 1, "no folder given");

    await Deno.mkdir(`${tmp}/empty-one`);
    const empty = await run(["run", "-A", NEW, "--jsr", "empty-one"], tmp);
    assert.equal(empty.code, 0, empty.out);
    const config = JSON.parse(await Deno.readTextFile(`${tmp}/empty-one/deno.json`));
    assert.equal(config.imports["@fw/events/denokv"], "jsr:@fw/events@^0.1.0/denokv");
  } finally {
    await Deno.remove(tmp, { recursive: true });
  }
});
