/**
 * `deno task dev` stops on SIGTERM and SIGINT: the task runner, the `dev` command, Deno's watcher
 * and the app all end (Deno's watcher alone would keep waiting for a file change).
 */

import assert from "node:assert/strict";

const root = new URL("..", import.meta.url).pathname;

/** Parent pid of every running process (Linux `/proc`). */
async function parents(): Promise<Map<number, number>> {
  const map = new Map<number, number>();
  for await (const entry of Deno.readDir("/proc")) {
    if (!/^\d+$/.test(entry.name)) continue;
    try {
      const stat = await Deno.readTextFile(`/proc/${entry.name}/stat`);
      // "pid (comm) state ppid ...": comm may hold spaces, so read after the last ")"
      const ppid = Number(stat.slice(stat.lastIndexOf(")") + 2).split(" ")[1]);
      map.set(Number(entry.name), ppid);
    } catch {
      // ended while listing
    }
  }
  return map;
}

/** `pid` and all its descendants. */
async function tree(pid: number): Promise<number[]> {
  const ppids = await parents();
  const found = [pid];
  for (let i = 0; i < found.length; i++) {
    for (const [child, parent] of ppids) if (parent === found[i]) found.push(child);
  }
  return found;
}

function alive(pid: number): boolean {
  try {
    const stat = Deno.readTextFileSync(`/proc/${pid}/stat`);
    return stat.slice(stat.lastIndexOf(")") + 2)[0] !== "Z";
  } catch {
    return false;
  }
}

/** Reads the child's stdout until `marker` appears; keeps draining it afterwards. */
async function waitFor(stream: ReadableStream<Uint8Array>, marker: string): Promise<void> {
  const reader = stream.pipeThrough(new TextDecoderStream()).getReader();
  let seen = "";
  while (!seen.includes(marker)) {
    const { value, done } = await reader.read();
    if (done) throw new Error(`deno task dev ended before printing "${marker}": ${seen}`);
    seen += value;
  }
  (async () => {
    while (!(await reader.read()).done);
  })();
}

for (const signal of ["SIGTERM", "SIGINT"] as const) {
  Deno.test(`deno task dev ends the app and the watcher on ${signal}`, async () => {
    const child = new Deno.Command(Deno.execPath(), {
      args: ["task", "dev"],
      cwd: root,
      env: { PORT: "0", EVENTS_BROKER_PORT: "0", NO_COLOR: "1" },
      stdin: "null",
      stdout: "piped",
      stderr: "null",
    }).spawn();
    try {
      await waitFor(child.stdout, "fw example app: try");
      const pids = await tree(child.pid);
      assert.ok(pids.length >= 3, `task runner, dev command and watcher: ${pids.join(", ")}`);
      const started = performance.now();
      child.kill(signal);
      // a generous ceiling so that a regression fails instead of hanging the suite
      let ceiling: ReturnType<typeof setTimeout> | undefined;
      const status = await Promise.race([
        child.status,
        new Promise<null>((r) => ceiling = setTimeout(() => r(null), 15_000)),
      ]);
      clearTimeout(ceiling);
      assert.ok(status, `deno task dev is still running 15 s after ${signal}`);
      // the task runner has ended: its descendants end with it (each is polled, briefly)
      let left = pids.filter(alive);
      for (let i = 0; i < 100 && left.length; i++) {
        await new Promise((r) => setTimeout(r, 50));
        left = left.filter(alive);
      }
      const ms = Math.round(performance.now() - started);
      console.log(`${signal}: every process of deno task dev ended in ${ms} ms`);
      assert.deepEqual(left, [], "no process of deno task dev is left running");
      assert.equal(status.code, 0, "an orderly stop");
    } finally {
      for (const pid of await tree(child.pid).catch(() => [])) {
        try {
          Deno.kill(pid, "SIGKILL");
        } catch {
          // gone
        }
      }
    }
  });
}
