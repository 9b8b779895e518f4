/**
 * `deno task bench:http`: bare `Deno.serve`, Hono and fw side by side in one run, driven by `wrk`.
 *
 * Scenarios: (a) `GET /` text; (b) `GET /users/:id?limit=` with `Int` param and query schemas;
 * (c) `POST /orders` with a 7-field JSON body and a `.returns()` schema; (d) (b) in an app of 200
 * routes. Each server runs in its own process; rounds alternate the order of the servers to cancel
 * drift, and the median req/s of the rounds is reported with the ratios fw/bare and fw/Hono.
 * Hono and bare do no validation; fw validates everything.
 *
 * Servers run with `NODE_ENV=production`, as deployed: fw's response validation against
 * `.returns()` is a development aid and is off in production (pass `--dev` to keep it on).
 *
 * Options: `--duration <s>` (default 4), `--rounds <n>` (default 3), `--connections <n>` (50),
 * `--only <letters>` (for example `--only ac`), `--dev`.
 *
 * @module
 */

const dev = Deno.args.includes("--dev");
const args = Object.fromEntries(
  Deno.args.filter((a) => a !== "--dev")
    .map((a, i, all) => a.startsWith("--") ? [a.slice(2), all[i + 1]] : [])
    .filter((x) => x.length),
);
const duration = Number(args.duration ?? 4);
const rounds = Number(args.rounds ?? 3);
const connections = Number(args.connections ?? 50);

try {
  await new Deno.Command("wrk", { args: ["--version"], stdout: "null", stderr: "null" }).output();
} catch {
  console.error(
    "wrk is not installed: `apt-get install wrk` (Debian/Ubuntu) or `brew install wrk` (macOS)",
  );
  Deno.exit(1);
}

const ORDER = JSON.stringify({
  id: "7c9e6679-7425-40de-944b-e07fc1f90ae7",
  customer: "Ada",
  items: [{ sku: "A-1", qty: 2 }, { sku: "B-2", qty: 1 }],
  total: 42.5,
  currency: "EUR",
  note: "ring twice",
  placedAt: "2026-11-22T10:00:00Z",
});
const postScript = await Deno.makeTempFile({ suffix: ".lua" });
await Deno.writeTextFile(
  postScript,
  `wrk.method = "POST"\nwrk.body = '${ORDER}'\nwrk.headers["Content-Type"] = "application/json"\n`,
);

interface Scenario {
  name: string;
  path: string;
  routes: number;
  post?: boolean;
}
const scenarios: Scenario[] = [
  { name: "(a) GET / text", path: "/", routes: 3 },
  { name: "(b) GET /users/:id?limit=", path: "/users/42?limit=10", routes: 3 },
  { name: "(c) POST /orders 7-field body", path: "/orders", routes: 3, post: true },
  { name: "(d) (b) with 200 routes", path: "/users/42?limit=10", routes: 200 },
];
const only = args.only as string | undefined;
const selected = only ? scenarios.filter((s) => only.includes(s.name[1])) : scenarios;
const kinds = ["bare", "hono", "fw"] as const;

async function start(kind: string, port: number, routes: number): Promise<Deno.ChildProcess> {
  const child = new Deno.Command(Deno.execPath(), {
    args: [
      "run",
      "-A",
      new URL("./_bench_servers.ts", import.meta.url).pathname,
      kind,
      String(port),
      String(routes),
    ],
    stdout: "piped",
    stderr: "inherit",
    env: { NODE_ENV: dev ? "development" : "production" },
  }).spawn();
  const reader = child.stdout.pipeThrough(new TextDecoderStream()).getReader();
  let seen = "";
  while (!seen.includes("ready")) {
    const { value, done } = await reader.read();
    if (done) throw new Error(`${kind} server exited before it was ready`);
    seen += value;
  }
  reader.releaseLock();
  child.stdout.cancel().catch(() => {});
  return child;
}

async function wrk(url: string, post: boolean): Promise<number> {
  const out = await new Deno.Command("wrk", {
    args: ["-t1", `-c${connections}`, `-d${duration}s`, ...(post ? ["-s", postScript] : []), url],
    stdout: "piped",
    stderr: "piped",
  }).output();
  const text = new TextDecoder().decode(out.stdout);
  if (/Non-2xx or 3xx responses/.test(text)) {
    throw new Error(`non-2xx responses from ${url}:\n${text}`);
  }
  const m = /Requests\/sec:\s+([\d.]+)/.exec(text);
  if (!m) throw new Error(`could not read wrk output:\n${text}`);
  return Number(m[1]);
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
const results: Record<string, Record<string, number>> = {};
let port = 18300;

for (const s of selected) {
  const runs: Record<string, number[]> = { bare: [], hono: [], fw: [] };
  for (let r = 0; r < rounds; r++) {
    const order = r % 2 === 0 ? [...kinds] : [...kinds].reverse();
    for (const kind of order) {
      const p = port++;
      const child = await start(kind, p, s.routes);
      try {
        await wrk(`http://127.0.0.1:${p}${s.path}`, s.post === true); // warm-up (JIT)
        runs[kind].push(await wrk(`http://127.0.0.1:${p}${s.path}`, s.post === true));
      } finally {
        child.kill("SIGTERM");
        await child.status;
      }
    }
  }
  results[s.name] = Object.fromEntries(kinds.map((k) => [k, median(runs[k])]));
  const r = results[s.name];
  console.log(
    `${s.name}: bare ${r.bare.toFixed(0)}  hono ${r.hono.toFixed(0)}  fw ${r.fw.toFixed(0)}  ` +
      `fw/bare ${(r.fw / r.bare).toFixed(2)}  fw/hono ${(r.fw / r.hono).toFixed(2)}`,
  );
}
await Deno.remove(postScript);

console.log(
  `\nreq/s, median of ${rounds} rounds of ${duration}s, wrk -t1 -c${connections}, ${Deno.build.target}`,
);
console.log("| scenario | bare | hono | fw | fw/bare | fw/hono |");
console.log("| --- | ---: | ---: | ---: | ---: | ---: |");
for (const [name, r] of Object.entries(results)) {
  console.log(
    `| ${name} | ${r.bare.toFixed(0)} | ${r.hono.toFixed(0)} | ${r.fw.toFixed(0)} | ${
      (r.fw / r.bare).toFixed(2)
    } | ${(r.fw / r.hono).toFixed(2)} |`,
  );
}
