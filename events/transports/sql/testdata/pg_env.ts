/**
 * Test support for the SQL transport's tests: the test database URL, a fresh schema per test that
 * is dropped afterwards with everything opened on it, and an admin connection.
 *
 * @module
 */

import { createLogger, MemoryMeter, MemorySink } from "@fw/runtime";
import { EventBus } from "../../../event_bus.ts";
import { openSql, type SqlConnection } from "../../../_postgres.ts";
import { SqlTransport, type SqlTransportOptions } from "../sql_transport.ts";

/** The PostgreSQL the tests use (`FW_TEST_POSTGRES_URL` overrides). */
export const PG_URL: string = Deno.env.get("FW_TEST_POSTGRES_URL") ??
  "postgres://root@127.0.0.1:5432/test";

/** A random schema name. */
export function randomSchema(tag: string): string {
  return `fwt_${tag}_${crypto.randomUUID().replaceAll("-", "").slice(0, 10)}`;
}

/** Opens an admin connection (caller closes it). */
export function admin(): Promise<SqlConnection> {
  return openSql("test", { url: PG_URL }, { max: 2 });
}

/** Drops schemas (and everything in them). */
export async function dropSchemas(names: readonly string[]): Promise<void> {
  const a = await admin();
  try {
    for (const s of names) await a.sql.unsafe(`DROP SCHEMA IF EXISTS "${s}" CASCADE`);
  } finally {
    await a.close();
  }
}

/** Transports and buses of one test on one schema; `close()` stops them and drops the schema. */
export class PgTrack {
  readonly schema: string;
  readonly sink: MemorySink = new MemorySink();
  readonly meter: MemoryMeter = new MemoryMeter();
  readonly logger = createLogger({ sink: this.sink, level: "debug" });
  readonly #buses: EventBus[] = [];
  readonly #transports: SqlTransport[] = [];
  readonly #conns: SqlConnection[] = [];

  constructor(tag: string) {
    this.schema = randomSchema(tag);
  }

  transport(options: Partial<SqlTransportOptions> = {}): SqlTransport {
    const t = new SqlTransport({
      ...(options.client ? {} : { url: PG_URL }),
      schema: this.schema,
      poolSize: 3,
      meter: this.meter,
      logger: this.logger,
      ...options,
    });
    this.#transports.push(t);
    return t;
  }

  bus(transport: SqlTransport): EventBus {
    const bus = new EventBus({
      transports: { pg: transport },
      meter: this.meter,
      logger: this.logger,
    });
    this.#buses.push(bus);
    return bus;
  }

  async admin(): Promise<SqlConnection> {
    const c = await admin();
    this.#conns.push(c);
    return c;
  }

  async close(): Promise<void> {
    for (const bus of this.#buses) await bus.stop({ closeTransports: false });
    for (const t of this.#transports) await t.close();
    for (const c of this.#conns) await c.close();
    await dropSchemas([this.schema]);
  }
}

/** Runs `fn` with a fresh track, closed (and its schema dropped) afterwards. */
export async function withPg(tag: string, fn: (track: PgTrack) => Promise<void>): Promise<void> {
  const track = new PgTrack(tag);
  try {
    await fn(track);
  } finally {
    await track.close();
  }
}

/** Polls until `check` holds or the time runs out. */
export async function until(
  check: () => boolean | Promise<boolean>,
  ms: number,
  what: string,
): Promise<void> {
  const end = Date.now() + ms;
  while (!(await check())) {
    if (Date.now() > end) throw new Error(`Timed out after ${ms} ms waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 10));
  }
}
