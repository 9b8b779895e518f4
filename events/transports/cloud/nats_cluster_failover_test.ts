/**
 * Failover on a three-node NATS JetStream cluster (`testdata/nats_cluster_failover.ts`): 100
 * concurrent publishers send messages to a stream with three replicas while the node leading it is
 * killed (SIGKILL). Every message must be handled at least once and stored once; the test prints
 * how many were handled twice.
 *
 * In the gate it sends 1,000 messages (the cluster's election takes most of its time);
 * `FW_CHAOS_MESSAGES` sets another count, and `deno task chaos:nats-cluster` runs 10,000.
 *
 * @module
 */

import assert from "node:assert/strict";
import { runNatsClusterFailover } from "./testdata/nats_cluster_failover.ts";
import { hasNatsServer } from "./testdata/nats_cluster.ts";

const MESSAGES = Number(Deno.env.get("FW_CHAOS_MESSAGES") ?? 1_000);
const hasServer = await hasNatsServer();
if (!hasServer) {
  const reason = "no nats-server binary on PATH";
  if (Deno.env.get("CI")) throw new Error(`The NATS cluster failover test cannot run: ${reason}`);
  console.log(`skipping the NATS cluster failover test: ${reason}`);
}

Deno.test({
  name: `CloudPubSubTransport on a 3-node NATS cluster loses none of ${MESSAGES} messages ` +
    "from 100 publishers when the stream leader is killed",
  ignore: !hasServer,
  fn: async () => {
    const log = Deno.env.get("FW_CHAOS_MESSAGES") ? console.log : undefined;
    const r = await runNatsClusterFailover({ messages: MESSAGES, publishers: 100, log });
    console.log(
      `nats cluster failover: killed ${r.killed}, ${r.newLeader} took over in ` +
        `${(r.electionMs / 1000).toFixed(1)} s; published ` +
        `${r.published}, stored ${r.stored}, handled ${r.handled} distinct in ${r.invocations} ` +
        `invocations (${r.duplicates} duplicates), missing ${r.missing.length}, ` +
        `${(r.elapsedMs / 1000).toFixed(1)} s`,
    );
    assert.equal(r.published, MESSAGES);
    assert.deepEqual(r.missing.slice(0, 20), [], `missing ${r.missing.length}`);
    assert.equal(r.handled, MESSAGES);
    assert.equal(r.stored, MESSAGES, "each message stored once (Nats-Msg-Id de-duplication)");
    assert.notEqual(r.newLeader, r.killed);
  },
});
