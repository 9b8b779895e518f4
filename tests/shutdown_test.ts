/**
 * Graceful shutdown under load (issue 18): a real server process gets SIGTERM while a wrk-like
 * loop keeps requests coming. No request the server admitted may end in a reset or a 5xx (those
 * made after the listener closed are refused at connect, which is counted apart), the process
 * exits 0, and every event whose publish was acknowledged is handled, counted across a restart
 * on the same Deno KV database and on the same local HTTP broker.
 *
 * @module
 */

import assert from "node:assert/strict";
import { MemoryBroker, serveLocalBroker } from "@fw/events";
import { JsonLinesProcess } from "../events/testdata/child_process.ts";

const fixture = new URL("./fixtures/shutdown_app/main.ts", import.meta.url).pathname;
const config = new URL("../deno.json", import.meta.url).pathname;

interface Line {
  event: string;
  pid: number;
  n?: number;
  url?: string;
}

/** A `deno run` of the fixture whose JSON stdout lines are collected as they arrive. */
class Server extends JsonLinesProcess<Line> {
  constructor(args: string[]) {
    super(["--config", config, fixture, ...args]);
  }

  async url(): Promise<string> {
    for (let i = 0; i < 600; i++) {
      const line = this.lines.find((l) => l.event === "listening");
      if (line) return line.url!;
      await new Promise((r) => setTimeout(r, 50));
    }
    throw new Error(`server did not start: ${this.stderr}`);
  }

  ns(event: string): Set<number> {
    return new Set(this.lines.filter((l) => l.event === event).map((l) => l.n!));
  }
}

type Outcome = "ok" | "5xx" | "other" | "refused" | "broken";

/** One request on its own connection: refused at connect is told apart from a broken exchange. */
async function request(port: number, n: number): Promise<Outcome> {
  let conn: Deno.TcpConn;
  try {
    conn = await Deno.connect({ hostname: "127.0.0.1", port });
  } catch (error) {
    // refused, or reset while still in the closing listener's backlog: never admitted
    if (
      error instanceof Deno.errors.ConnectionRefused ||
      error instanceof Deno.errors.ConnectionReset
    ) return "refused";
    throw error;
  }
  try {
    await conn.write(
      new TextEncoder().encode(
        `POST /publish/${n} HTTP/1.1\r\nhost: t\r\ncontent-length: 0\r\nconnection: close\r\n\r\n`,
      ),
    );
    let text = "";
    const buf = new Uint8Array(4096);
    for (;;) {
      const read = await conn.read(buf);
      if (read === null) break;
      text += new TextDecoder().decode(buf.subarray(0, read));
    }
    const status = Number(text.slice(9, 12));
    if (!text.startsWith("HTTP/1.1 ")) return "broken";
    return status === 200 ? "ok" : status >= 500 ? "5xx" : "other";
  } catch {
    return "broken";
  } finally {
    try {
      conn.close();
    } catch {
      // closed
    }
  }
}

/** Drives `workers` concurrent request loops; SIGTERMs the server after `before` successes. */
async function loadThenTerm(server: Server, workers: number, before: number) {
  const port = Number(new URL(await server.url()).port);
  const outcomes = new Map<number, Outcome>();
  let next = 0;
  let ok = 0;
  let termed = false;
  const loop = async () => {
    for (;;) {
      const n = next++;
      const outcome = await request(port, n);
      outcomes.set(n, outcome);
      if (outcome === "ok" && ++ok >= before && !termed) {
        termed = true;
        server.signal("SIGTERM");
      }
      if (outcome === "refused") return; // the listener is gone: this worker is done
    }
  };
  await Promise.all(Array.from({ length: workers }, loop));
  return outcomes;
}

function count(outcomes: Map<number, Outcome>, kind: Outcome): number[] {
  return [...outcomes].filter(([, o]) => o === kind).map(([n]) => n);
}

async function waitHandled(servers: Server[], published: number[], timeoutMs: number) {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const handled = new Set(servers.flatMap((s) => [...s.ns("handled")]));
    const missing = published.filter((n) => !handled.has(n));
    if (missing.length === 0 || Date.now() > deadline) return missing;
    await new Promise((r) => setTimeout(r, 100));
  }
}

async function scenario(args: string[]) {
  const first = new Server(args);
  let second: Server | undefined;
  try {
    const outcomes = await loadThenTerm(first, 16, 150);
    const { code, stderr } = await first.exit();
    assert.equal(code, 0, stderr);
    const admitted = first.ns("admitted");
    const published = count(outcomes, "ok");
    // every admitted request was answered 200: none was reset or got a 5xx
    const failedAdmitted = [...admitted].filter((n) => outcomes.get(n) !== "ok");
    assert.deepEqual(failedAdmitted, [], "admitted requests that did not get 200");
    assert.deepEqual(count(outcomes, "5xx"), []);
    assert.deepEqual(count(outcomes, "other"), []);
    assert.ok(published.length >= 150);
    assert.ok(count(outcomes, "refused").length >= 1);
    // a request that broke was never admitted (it reached a closing listener's backlog)
    for (const n of count(outcomes, "broken")) assert.ok(!admitted.has(n));

    // the next process on the same transport handles whatever was left
    second = new Server(args);
    await second.url();
    const missing = await waitHandled([first, second], published, 30_000);
    assert.deepEqual(missing, [], "acknowledged events that were never handled");
    second.signal("SIGTERM");
    assert.equal((await second.exit()).code, 0);
    second = undefined;
  } finally {
    first.signal("SIGKILL");
    await first.exit();
    if (second) {
      second.signal("SIGKILL");
      await second.exit();
    }
  }
}

Deno.test("SIGTERM under load: no admitted request reset or 5xx, no event lost across a restart on Deno KV", async () => {
  const dir = await Deno.makeTempDir({ prefix: "fw_shutdown_kv_" });
  try {
    await scenario(["kv", `${dir}/events.sqlite`]);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("SIGTERM under load: no admitted request reset or 5xx, no event lost across a restart on the local HTTP broker", async () => {
  const broker = new MemoryBroker();
  const local = serveLocalBroker(broker, { port: 0 });
  try {
    await scenario(["broker", local.url]);
  } finally {
    await local.close();
    await broker.close();
  }
});
