/**
 * The transport conformance suite (with the delayed-delivery suite it runs) against a three-node
 * NATS JetStream cluster of the file's own (`testdata/nats_cluster.ts`), every stream with three
 * replicas and the client given all three servers. The cluster starts when the file loads and
 * stops when it unloads.
 *
 * @module
 */

import assert from "node:assert/strict";
import { runTransportConformance } from "../conformance.ts";
import { CloudPubSubTransport } from "./cloud_pubsub.ts";
import { NatsJetStreamClient } from "./nats_jetstream.ts";
import { hasNatsServer, NatsCluster } from "./testdata/nats_cluster.ts";

const hasServer = await hasNatsServer();
if (!hasServer) {
  const reason = "no nats-server binary on PATH";
  if (Deno.env.get("CI")) throw new Error(`The NATS cluster tests cannot run: ${reason}`);
  console.log(`skipping the NATS cluster tests: ${reason}`);
}

const streamOf = (ns: string) => `FWC_${ns.replace(/[^A-Za-z0-9_-]/g, "_")}`;

if (hasServer) {
  const cluster = new NatsCluster();
  addEventListener("unload", () => cluster.closeSync());
  await cluster.start();
  const client = (stream: string) =>
    new NatsJetStreamClient({
      servers: cluster.servers,
      stream,
      subjectPrefix: stream.toLowerCase(),
      replicas: 3,
      ackWaitMs: 5000,
    });

  Deno.test("natsJetStreamClient creates a stream with three replicas on the cluster", async () => {
    const stream = `FWC_R3_${crypto.randomUUID().slice(0, 8)}`;
    const c = client(stream);
    try {
      await c.publish("r3.check", new TextEncoder().encode("{}"), { attributes: {} });
      const leader = await cluster.waitForStreamLeader(stream);
      assert.ok(cluster.servers.includes(cluster.node(leader).address));
      assert.equal(await cluster.streamReplicas(stream), 3);
    } finally {
      await c.deleteStream();
      await c.close();
    }
  });

  runTransportConformance("CloudPubSubTransport(NATS JetStream cluster, 3 replicas)", {
    create: (ns) => new CloudPubSubTransport({ client: client(streamOf(ns)) }),
    cleanup: async (namespaces) => {
      for (const ns of namespaces) {
        const c = client(streamOf(ns));
        try {
          await c.deleteStream();
        } finally {
          await c.close();
        }
      }
    },
    timeoutMs: 15_000,
  });
}
