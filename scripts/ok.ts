/**
 * `deno task ok`: the one gate. Runs every check in order and stops at the first failure.
 *
 * fmt check, lint, type check, doc lint of every exports entry, the member check, the import-cycle
 * check, the examples' generated files (`generate --check`), tests (with doc examples) and the
 * publish dry run.
 *
 * @module
 */

import { exportEntries } from "./_members.ts";

const entries = await exportEntries();

const steps: [string, string[]][] = [
  ["fmt", ["fmt", "--check"]],
  ["lint", ["lint"]],
  ["check", ["check", "."]],
  ["doc lint", ["doc", "--lint", ...entries]],
  ["members", ["run", "-A", "scripts/check_members.ts"]],
  ["import cycles", ["run", "-A", "scripts/check_cycles.ts"]],
  ["generated files", ["run", "-A", "scripts/generate_examples.ts", "--check"]],
  ["test", ["test", "-A", "--doc", "--parallel"]],
  ["publish dry run", ["publish", "--dry-run", "--allow-dirty"]],
];

for (const [name, args] of steps) {
  console.log(`\n=== ok: ${name}: deno ${args.join(" ")}`);
  const started = performance.now();
  const { code } = await new Deno.Command(Deno.execPath(), { args, stdin: "null" }).spawn().status;
  const secs = ((performance.now() - started) / 1000).toFixed(1);
  if (code !== 0) {
    console.error(`=== ok: ${name} failed (exit ${code}, ${secs}s)`);
    Deno.exit(code);
  }
  console.log(`=== ok: ${name} passed (${secs}s)`);
}
console.log("\n=== ok: every check passed");
