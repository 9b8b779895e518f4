/**
 * `deno task bench:client`: what a call through the typed client (`@fw/application/client`) costs
 * over a bare `fetch` of the same route. Both send `GET /items/1?fields=a&fields=b` with
 * `Accept: application/json` and parse the JSON body, against one server in a child process
 * (`_bench_client_server.ts`), with the same number of requests in flight. Each round runs both in
 * alternating blocks (`BENCH_BLOCK` requests each, which kind goes first alternates by round), so
 * that both see the same machine load; the table gives each round's requests per second and the
 * ratio (client time / bare time), and the CPU time the calling process spent per request (steadier
 * on a loaded machine; the server's work is not in it, so its ratio is the harsher one), then the
 * medians. The budget: the client adds at most 5 % to the time of a call. Last, the client's own work
 * with the network taken out (a transport answering at once), beside a bare fetch's CPU per request:
 * the figure least moved by a loaded machine. The verdict on the budget is printed only when the
 * bare fetch's median req/s is within 1.5x of its quiet figure in `_quiet.ts` (else: run again).
 *
 * ```sh
 * deno task bench:client            # 9 rounds of 4000 requests each, 16 in flight
 * BENCH_ROUNDS=5 BENCH_REQUESTS=2000 deno task bench:client
 * ```
 *
 * @module
 */

import { cpuUsage } from "node:process";
import { apiClient } from "@fw/application/client";
import type { ClientRoutes } from "../application/testdata/client_app.ts";
import { Child } from "./_bench_child.ts";
import { checkBaseline, verdict } from "./_quiet.ts";
import { median } from "./_stats.ts";

const ROUNDS = Number(Deno.env.get("BENCH_ROUNDS") ?? 9);
const REQUESTS = Number(Deno.env.get("BENCH_REQUESTS") ?? 4000);
const IN_FLIGHT = Number(Deno.env.get("BENCH_IN_FLIGHT") ?? 16);
const BLOCK = Number(Deno.env.get("BENCH_BLOCK") ?? 250);

const server = new Child(["scripts/_bench_client_server.ts"], { name: "bench server" });
const { port } = await server.read();
const base = `http://127.0.0.1:${port}`;
const client = apiClient<ClientRoutes>(base);
const url = `${base}/items/1?fields=a&fields=b`;

/** One request of each kind; both must answer 200 with the item. */
const kinds: Record<"bare" | "client", () => Promise<unknown>> = {
  bare: async () => {
    const res = await fetch(url, { headers: { accept: "application/json" } });
    if (res.status !== 200) throw new Error(`bare fetch: ${res.status}`);
    return await res.json();
  },
  client: async () => {
    const res = await client.get("/items/:id", {
      params: { id: 1 },
      query: { fields: ["a", "b"] },
    });
    if (res.status !== 200) throw new Error(`client: ${res.status}`);
    return res.data;
  },
};

/** Runs `n` requests with `IN_FLIGHT` at a time; returns the elapsed and CPU milliseconds. */
async function run(call: () => Promise<unknown>, n: number): Promise<[number, number]> {
  let next = 0;
  const cpu = cpuUsage();
  const start = performance.now();
  await Promise.all(Array.from({ length: IN_FLIGHT }, async () => {
    while (next++ < n) await call();
  }));
  const used = cpuUsage(cpu);
  return [performance.now() - start, (used.user + used.system) / 1000];
}

await run(kinds.bare, 500); // warm both paths (connections, JIT)
await run(kinds.client, 500);

const load = (await Deno.readTextFile("/proc/loadavg").catch(() => "?")).split(" ").slice(0, 3);
console.log(
  `typed client vs bare fetch: ${ROUNDS} rounds x ${REQUESTS} requests, ${IN_FLIGHT} in flight; load average ${
    load.join(" ")
  }`,
);
console.log(
  "round  first   bare req/s  client req/s  client/bare time  bare CPU µs/req  client CPU µs/req  client/bare CPU",
);
const bare: number[] = [];
const typed: number[] = [];
const ratios: number[] = [];
const bareCpu: number[] = [];
const typedCpu: number[] = [];
const cpuRatios: number[] = [];
for (let round = 1; round <= ROUNDS; round++) {
  const clientFirst = round % 2 === 0;
  const times = { bare: 0, client: 0 };
  const cpu = { bare: 0, client: 0 };
  for (let done = 0; done < REQUESTS; done += BLOCK) {
    for (const kind of clientFirst ? ["client", "bare"] as const : ["bare", "client"] as const) {
      const [wall, used] = await run(kinds[kind], Math.min(BLOCK, REQUESTS - done));
      times[kind] += wall;
      cpu[kind] += used;
    }
  }
  bareCpu.push(cpu.bare / REQUESTS * 1000);
  typedCpu.push(cpu.client / REQUESTS * 1000);
  cpuRatios.push(cpu.client / cpu.bare);
  bare.push(REQUESTS / times.bare * 1000);
  typed.push(REQUESTS / times.client * 1000);
  ratios.push(times.client / times.bare);
  console.log(
    `${String(round).padStart(5)}  ${(clientFirst ? "client" : "bare").padEnd(6)}  ${
      bare.at(-1)!.toFixed(0).padStart(11)
    }  ${typed.at(-1)!.toFixed(0).padStart(12)}  ${ratios.at(-1)!.toFixed(3).padStart(16)}  ${
      bareCpu.at(-1)!.toFixed(1).padStart(15)
    }  ${typedCpu.at(-1)!.toFixed(1).padStart(17)}  ${cpuRatios.at(-1)!.toFixed(3).padStart(15)}`,
  );
}
const overhead = (median(ratios) - 1) * 100;
console.log(
  `median         ${median(bare).toFixed(0).padStart(11)}  ${
    median(typed).toFixed(0).padStart(12)
  }  ${median(ratios).toFixed(3).padStart(16)}  ${median(bareCpu).toFixed(1).padStart(15)}  ${
    median(typedCpu).toFixed(1).padStart(17)
  }  ${median(cpuRatios).toFixed(3).padStart(15)}`,
);
const baseline = checkBaseline("client/bare", median(bare));
console.log(baseline.text);
console.log(
  verdict(
    [baseline],
    `the client adds ${overhead.toFixed(1)} % to the time of a bare fetch (budget 5 %): ${
      overhead <= 5 ? "within" : "OVER"
    }`,
  ) +
    `; the calling process spends ${
      ((median(cpuRatios) - 1) * 100).toFixed(1)
    } % more CPU per request (its own side only, not the server's)`,
);

// The client's own work, with the network taken out: the same call against a transport that
// answers at once with a prepared JSON response, beside the bare path over that transport.
const item = JSON.stringify(await kinds.bare());
const stub = () =>
  Promise.resolve(new Response(item, { headers: { "content-type": "application/json" } }));
const stubbed = apiClient<ClientRoutes>(base, { fetch: stub });
const perCall = async (call: () => Promise<unknown>) => {
  const n = 50_000;
  const start = performance.now();
  for (let i = 0; i < n; i++) await call();
  return (performance.now() - start) / n * 1000;
};
const own: number[] = [];
for (let round = 0; round < 5; round++) {
  const bareStub = await perCall(async () => (await stub()).json());
  const clientStub = await perCall(() =>
    stubbed.get("/items/:id", { params: { id: 1 }, query: { fields: ["a", "b"] } })
  );
  own.push(clientStub - bareStub);
}
console.log(
  `the client's own work (no network, median of 5): ${median(own).toFixed(2)} µs per call, ${
    (median(own) / median(bareCpu) * 100).toFixed(1)
  } % of a bare fetch's ${median(bareCpu).toFixed(1)} µs CPU per request`,
);
await server.close();
