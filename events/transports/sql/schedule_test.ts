import { runScheduleStoreConformance } from "../../schedule/store_conformance.ts";
import { threeInstancesOneKilled } from "../../schedule/testdata/multi_process.ts";
import { SqlTransport } from "./sql_transport.ts";
import { dropSchemas, PG_URL, randomSchema } from "./testdata/pg_env.ts";

const schemas = new Map<string, string>();
const schemaOf = (ns: string) => {
  let s = schemas.get(ns);
  if (!s) schemas.set(ns, s = randomSchema("sched"));
  return s;
};

runScheduleStoreConformance("SqlScheduleStore", {
  open(ns) {
    // Each store has its own client, as another process would.
    const t = new SqlTransport({ url: PG_URL, schema: schemaOf(ns), poolSize: 3 });
    return { store: t.scheduleStore(), close: () => t.close() };
  },
  cleanup: (ns) => dropSchemas([schemaOf(ns)]),
});

Deno.test("schedules on PostgreSQL: three processes, one SIGKILLed, run each tick once", async () => {
  const schema = randomSchema("sched");
  try {
    await threeInstancesOneKilled("sql", schema);
  } finally {
    await dropSchemas([schema]);
  }
});
