/**
 * Chaos test for the SQL transport (spec 6.2.3, at-least-once; issue 13): 100 concurrent
 * publishers send messages while three consumer processes handle them; meanwhile the test
 * terminates the consumers' database connections twice (`pg_terminate_backend`, chosen by an
 * `application_name` unique to this run) and SIGKILLs one consumer process mid-delivery. Every
 * message must be handled at least once, none lost, and the queue must end empty; the duplicate
 * count is printed.
 *
 * The test suite sends 1,000 messages; `deno task chaos:sql` sends 10,000
 * (`FW_CHAOS_MESSAGES`).
 *
 * @module
 */

import assert from "node:assert/strict";
import { EventBus } from "../../event_bus.ts";
import { getPublisher } from "../../publisher.ts";
import { topic } from "../../topic.ts";
import { Int } from "@fw/runtime";
import { SqlTransport } from "./sql_transport.ts";
import { admin, dropSchemas, PG_URL, randomSchema, until } from "./testdata/pg_env.ts";
import { JsonLinesProcess } from "../../testdata/child_process.ts";

const Job = topic("chaos.job", { n: Int });
const fixture = new URL("./testdata/sql_consumer.ts", import.meta.url).pathname;
const config = new URL("../../../deno.json", import.meta.url).pathname;
const TOTAL = Number(Deno.env.get("FW_CHAOS_MESSAGES") ?? 1000);
const PUBLISHERS = 100;

interface Line {
  event: string;
  pid: number;
  n?: number;
  attempt?: number;
}

/** A consumer process whose JSON output lines are collected as they arrive. */
class ConsumerProcess extends JsonLinesProcess<Line> {
  constructor(schema: string, app: string, handlerMs: number) {
    super(["--config", config, fixture, PG_URL, schema, app, String(handlerMs)]);
  }

  handled(): number {
    return this.lines.filter((l) => l.event === "handled").length;
  }

  /** Handler runs started and not (yet) finished, as far as its output shows. */
  running(): number {
    return this.lines.filter((l) => l.event === "started").length - this.handled();
  }

  async ready(ms: number): Promise<void> {
    await until(() => this.lines.some((l) => l.event === "ready"), ms, `ready; ${this.stderr}`);
  }
}

Deno.test({
  name:
    `sqlTransport loses nothing while consumer connections are terminated and a consumer is SIGKILLed (${TOTAL} messages)`,
  sanitizeOps: false,
  sanitizeResources: false,
  fn: async () => {
    const schema = randomSchema("chaos");
    const app = `fw-chaos-${crypto.randomUUID().slice(0, 8)}`;
    const publisherTransport = new SqlTransport({ url: PG_URL, schema, poolSize: 10 });
    await publisherTransport.migrate();
    const bus = new EventBus({ transports: { pg: publisherTransport } });
    const publish = getPublisher(Job, { bus });
    const db = await admin();
    const consumers: ConsumerProcess[] = [];
    const terminate = async () => {
      const rows = await db.sql.unsafe(
        `SELECT pg_terminate_backend(pid) AS ok FROM pg_stat_activity
         WHERE application_name = $1 AND pid <> pg_backend_pid()`,
        [app],
      );
      return rows.length;
    };
    try {
      // The first one, the victim, takes 3 s per message, so it is surely mid-delivery when killed, even
      // when a loaded machine reads its output late.
      for (let i = 0; i < 3; i++) consumers.push(new ConsumerProcess(schema, app, i ? 10 : 3000));
      for (const c of consumers) await c.ready(60_000);
      const victim = consumers[0];
      let next = 0, published = 0;
      const faults: string[] = [];
      const chaos = (async () => {
        await until(() => published >= TOTAL * 0.2, 120_000, "20% published");
        faults.push(`terminated ${await terminate()} consumer backends`);
        await until(
          () => published >= TOTAL * 0.45 && victim.running() > 0,
          120_000,
          "45% published and the victim mid-delivery",
        );
        const inFlight = victim.running();
        await victim.kill(); // Mid-delivery: it holds claims on messages it has not acked.
        faults.push(
          `SIGKILLed a consumer with ${inFlight} handler runs in flight after ${victim.handled()} handled`,
        );
        await until(() => published >= TOTAL * 0.7, 120_000, "70% published");
        faults.push(`terminated ${await terminate()} consumer backends`);
      })();
      await Promise.all(Array.from({ length: PUBLISHERS }, async () => {
        while (next < TOTAL) {
          const n = next++;
          await publish({ n }, { messageId: `chaos-${n}` });
          published++;
        }
      }));
      await chaos;
      const counts = new Map<number, number>();
      const tally = () => {
        counts.clear();
        for (const c of consumers) {
          for (const l of c.lines) {
            if (l.event === "handled") counts.set(l.n!, (counts.get(l.n!) ?? 0) + 1);
          }
        }
        return counts.size;
      };
      try {
        await until(() => tally() === TOTAL, 120_000, `all ${TOTAL} messages handled`);
      } catch (err) {
        const missing = [...Array(TOTAL).keys()].filter((n) => !counts.has(n));
        const rows = await db.sql.unsafe(
          `SELECT claimed_by, attempt, claims, available_at - now() AS due,
             envelope->'payload'->>'n' AS n
           FROM "${schema}".queue ORDER BY id LIMIT 20`,
        );
        console.error("missing", missing.length, missing.slice(0, 20), rows);
        throw err;
      }
      await until(
        async () => {
          const rows = await db.sql.unsafe(`SELECT count(*)::int AS n FROM "${schema}".queue`);
          return rows[0].n === 0;
        },
        30_000,
        "an empty queue (every message acknowledged)",
      );
      const handled = [...counts.values()].reduce((a, b) => a + b, 0);
      console.log(
        `chaos: ${TOTAL} messages, ${handled} handler runs, ${handled - TOTAL} duplicates; ${
          faults.join("; ")
        }`,
      );
      assert.equal(counts.size, TOTAL);
      assert.equal(faults.length, 3);
      assert.ok(faults[0].startsWith("terminated") && !faults[0].startsWith("terminated 0"));
      const unfinished = victim.lines.filter((l) => l.event === "started")
        .filter((s) => !victim.lines.some((h) => h.event === "handled" && h.n === s.n));
      assert.ok(unfinished.length > 0, "the victim died with handler runs unfinished");
      assert.ok(unfinished.every((s) => counts.has(s.n!)), "another consumer handled them");
    } catch (err) {
      for (const c of consumers) console.error(`consumer stderr: ${c.stderr.slice(-3000)}`);
      throw err;
    } finally {
      for (const c of consumers) await c.kill();
      await bus.stop();
      await db.close();
      await dropSchemas([schema]);
    }
  },
});
