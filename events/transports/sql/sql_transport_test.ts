import { openSql } from "../../_postgres.ts";
import { runTransportConformance } from "../conformance.ts";
import { SqlTransport } from "./sql_transport.ts";

const URL = Deno.env.get("FW_TEST_POSTGRES_URL") ?? "postgres://root@127.0.0.1:5432/test";
const run = crypto.randomUUID().slice(0, 8);
const schemas = new Map<string, string>();
const schemaOf = (ns: string) => {
  let s = schemas.get(ns);
  if (!s) schemas.set(ns, s = `fwt_${run}_${schemas.size + 1}`);
  return s;
};

async function dropSchemas(names: string[]): Promise<void> {
  const admin = await openSql("test", { url: URL }, { max: 1 });
  try {
    for (const s of names) await admin.sql.unsafe(`DROP SCHEMA IF EXISTS "${s}" CASCADE`);
  } finally {
    await admin.close();
  }
}

runTransportConformance("SqlTransport", {
  // Each create() opens its own client, as another process would; one schema per test.
  create: (ns) => new SqlTransport({ url: URL, schema: schemaOf(ns), poolSize: 4 }),
  cleanup: (namespaces) => dropSchemas(namespaces.map(schemaOf)),
  timeoutMs: 10_000,
});
