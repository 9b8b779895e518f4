import assert from "node:assert/strict";
import { runNatsChaos } from "./testdata/nats_chaos.ts";

const hasServer = await new Deno.Command("nats-server", { args: ["--version"], stdout: "null" })
  .output().then((o) => o.success, () => false);
if (!hasServer) {
  const reason = "no nats-server binary on PATH";
  if (Deno.env.get("CI")) throw new Error(`The NATS chaos test cannot run: ${reason}`);
  console.log(`skipping the NATS chaos test: ${reason}`);
}

Deno.test({
  name: "CloudPubSubTransport on NATS loses none of 10,000 messages across a server restart",
  ignore: !hasServer,
  fn: async () => {
    const r = await runNatsChaos(10_000);
    assert.equal(r.published, 10_000);
    assert.deepEqual(r.missing, [], `missing ${r.missing.length}`);
    assert.equal(r.handled, 10_000);
  },
});
