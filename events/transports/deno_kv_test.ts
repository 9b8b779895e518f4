import { runTransportConformance } from "./conformance.ts";
import { DenoKvTransport } from "./deno_kv.ts";

const dir = await Deno.makeTempDir({ prefix: "fw-denokv-conformance-" });
const dbPath = (ns: string) => `${dir}/${ns}.sqlite`;

async function removeDatabase(path: string): Promise<void> {
  for (const suffix of ["", "-wal", "-shm"]) {
    await Deno.remove(path + suffix).catch(() => {});
  }
}

runTransportConformance("DenoKvTransport", {
  // One database file per test; each create() opens its own handle, as another process would.
  create: (ns) => new DenoKvTransport({ path: dbPath(ns) }),
  cleanup: async (namespaces) => {
    for (const ns of namespaces) await removeDatabase(dbPath(ns));
  },
  timeoutMs: 10_000,
});
